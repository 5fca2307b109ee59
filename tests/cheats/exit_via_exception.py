# exercise: vector_add
# expect: exception
"""Raises SystemExit-like control flow through a KeyboardInterrupt lookalike."""


class Stop(BaseException):
    pass


def launch(a, b, c):
    raise Stop()

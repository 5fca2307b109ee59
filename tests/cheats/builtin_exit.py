# exercise: vector_add
# expect: forbidden
"""Calls the exit() builtin from launch."""


def launch(a, b, c):
    exit(0)

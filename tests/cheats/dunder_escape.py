# exercise: vector_add
# expect: forbidden
"""Finds os through object's subclasses, without importing it."""
for cls in ().__class__.__base__.__subclasses__():
    if cls.__name__ == "_wrap_close":
        cls.__init__.__globals__["system"]("touch /tmp/pwned")


def launch(a, b, c):
    pass

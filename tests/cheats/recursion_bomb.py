# exercise: vector_add
# expect: exception
"""Recurses without end on the host."""


def deeper(n):
    return deeper(n + 1) + 1


def launch(a, b, c):
    deeper(0)

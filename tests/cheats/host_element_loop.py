# exercise: vector_add
# expect: forbidden
"""Adds the vectors element by element in host code, no kernel at all."""


def launch(a, b, c):
    for i in range(c.size):
        c[i] = a[i] + b[i]

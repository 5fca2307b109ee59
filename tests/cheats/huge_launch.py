# exercise: vector_add
# expect: exception
"""Launches an absurd grid: two billion blocks."""
from numba import cuda


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def launch(a, b, c):
    add[2**31 - 1, 1024](a, b, c)

# expect: wrong_result
"""Reads the neighbour: a[i + 1] instead of a[i] (with a guard that hides the overrun)."""
from numba import cuda


@cuda.jit
def add_kernel(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        j = min(i + 1, c.size - 1)
        c[i] = a[j] + b[i]


def launch(a, b, c):
    add_kernel[(c.size + 127) // 128, 128](a, b, c)

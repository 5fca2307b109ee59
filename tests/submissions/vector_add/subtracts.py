# expect: wrong_result
"""Subtracts instead of adding."""
from numba import cuda


@cuda.jit
def add_kernel(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] - b[i]


def launch(a, b, c):
    add_kernel[(c.size + 127) // 128, 128](a, b, c)

# exercise: vector_add
# expect: out_of_bounds
"""Writes one element past the end of c (on a GPU this corrupts neighbouring memory)."""
from numba import cuda


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i <= c.size:
        if i < c.size:
            c[i] = a[i] + b[i]
        else:
            c[i] = 0.0


def launch(a, b, c):
    add[(c.size + 128) // 128, 128](a, b, c)

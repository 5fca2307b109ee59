# expect: unwritten_output
"""The starter's `blocks = 1` left as it was: one block of 128 threads, whatever n, so every
element past 127 gets no thread."""
from numba import cuda


@cuda.jit
def add_kernel(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def launch(a, b, c):
    add_kernel[1, 128](a, b, c)

# expect: out_of_bounds
"""No `if i < n` guard: the threads past the end of the last block index out of range."""
from numba import cuda


@cuda.jit
def add_kernel(a, b, c):
    i = cuda.grid(1)
    c[i] = a[i] + b[i]


def launch(a, b, c):
    add_kernel[(c.size + 127) // 128, 128](a, b, c)

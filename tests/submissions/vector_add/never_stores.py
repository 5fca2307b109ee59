# expect: unwritten_output
"""The sum is computed into a local variable and never stored into `c`."""
from numba import cuda

THREADS_PER_BLOCK = 256


@cuda.jit
def add_kernel(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        total = a[i] + b[i]


def launch(a, b, c):
    blocks = (c.size + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    add_kernel[blocks, THREADS_PER_BLOCK](a, b, c)

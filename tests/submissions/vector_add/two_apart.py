# expect: unwritten_output
"""Each thread is meant to handle two neighbouring elements but writes only the first:
`i = 2 * cuda.grid(1)`, so every odd element is never written."""
from numba import cuda

THREADS_PER_BLOCK = 256


@cuda.jit
def add_kernel(a, b, c):
    i = 2 * cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def launch(a, b, c):
    pairs = (c.size + 1) // 2
    blocks = (pairs + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    add_kernel[blocks, THREADS_PER_BLOCK](a, b, c)

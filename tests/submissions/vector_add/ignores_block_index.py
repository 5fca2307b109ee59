# expect: unwritten_output
"""The index is the thread's place in its block only (`i = cuda.threadIdx.x`): every block
writes the same elements 0..255 and the rest of `c` is never written."""
from numba import cuda

THREADS_PER_BLOCK = 256


@cuda.jit
def add_kernel(a, b, c):
    i = cuda.threadIdx.x
    if i < c.size:
        c[i] = a[i] + b[i]


def launch(a, b, c):
    blocks = (c.size + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    add_kernel[blocks, THREADS_PER_BLOCK](a, b, c)

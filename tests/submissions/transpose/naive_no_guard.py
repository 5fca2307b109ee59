# expect: out_of_bounds
"""The one-thread-per-element version without a bounds guard: the threads of the partial
blocks at the edges read past the end of `a`."""
from numba import cuda


@cuda.jit
def transpose_kernel(a, out):
    j, i = cuda.grid(2)
    out[j, i] = a[i, j]


def launch(a, out):
    m, n = a.shape
    blocks = ((n + 15) // 16, (m + 15) // 16)
    transpose_kernel[blocks, (16, 16)](a, out)

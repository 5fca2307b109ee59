# expect: slow_memory
"""Reads along rows and writes each element straight to its transposed place: the writes of a
warp land `m` elements apart (the naive transpose, the speed baseline itself)."""
from numba import cuda


@cuda.jit
def transpose_kernel(a, out):
    col, row = cuda.grid(2)
    if row < a.shape[0] and col < a.shape[1]:
        out[col, row] = a[row, col]


def launch(a, out):
    m, n = a.shape
    transpose_kernel[((n + 31) // 32, (m + 31) // 32), (32, 32)](a, out)

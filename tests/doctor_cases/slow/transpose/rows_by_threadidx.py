# expect: slow_memory
"""threadIdx.x picks the row: neighbouring threads read `a` a whole row apart, and write `out`
along its rows."""
from numba import cuda


@cuda.jit
def transpose_kernel(a, out):
    row, col = cuda.grid(2)
    if row < a.shape[0] and col < a.shape[1]:
        out[col, row] = a[row, col]


def launch(a, out):
    m, n = a.shape
    transpose_kernel[((m + 31) // 32, (n + 31) // 32), (32, 32)](a, out)

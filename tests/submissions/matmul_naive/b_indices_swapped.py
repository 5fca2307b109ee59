# expect: out_of_bounds
"""b[col, kk] instead of b[kk, col]: B is k×n, so the column index runs off B's k rows as
soon as n > k."""
from numba import cuda, float32


@cuda.jit
def matmul_kernel(a, b, c):
    col, row = cuda.grid(2)
    if row < c.shape[0] and col < c.shape[1]:
        acc = float32(0.0)
        for kk in range(a.shape[1]):
            acc += a[row, kk] * b[col, kk]
        c[row, col] = acc


def launch(a, b, c):
    m, n = c.shape
    blocks = ((n + 15) // 16, (m + 15) // 16)
    matmul_kernel[blocks, (16, 16)](a, b, c)

# expect: unwritten_output
"""The grid is sized the wrong way round: x (columns) gets ceil(m / 16) blocks and y (rows)
gets ceil(n / 16). The guard keeps it in bounds, but when m and n differ by more than a
block a strip of C gets no thread."""
from numba import cuda, float32


@cuda.jit
def matmul_kernel(a, b, c):
    col, row = cuda.grid(2)
    if row < c.shape[0] and col < c.shape[1]:
        acc = float32(0.0)
        for kk in range(a.shape[1]):
            acc += a[row, kk] * b[kk, col]
        c[row, col] = acc


def launch(a, b, c):
    m, n = c.shape
    blocks = ((m + 15) // 16, (n + 15) // 16)  # should be (n ..., m ...)
    matmul_kernel[blocks, (16, 16)](a, b, c)

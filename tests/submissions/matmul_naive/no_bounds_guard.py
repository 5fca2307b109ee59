# expect: out_of_bounds
"""No `if row < m and col < n` guard: the threads of the last blocks that stick out past C
read rows of A and columns of B that do not exist."""
from numba import cuda, float32


@cuda.jit
def matmul_kernel(a, b, c):
    col, row = cuda.grid(2)
    acc = float32(0.0)
    for kk in range(a.shape[1]):
        acc += a[row, kk] * b[kk, col]
    c[row, col] = acc


def launch(a, b, c):
    m, n = c.shape
    blocks = ((n + 15) // 16, (m + 15) // 16)
    matmul_kernel[blocks, (16, 16)](a, b, c)

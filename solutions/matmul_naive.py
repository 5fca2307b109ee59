"""matmul_naive — multiply two matrices, one thread per output element.

Compute C = A @ B: c[row, col] = a[row, 0]·b[0, col] + a[row, 1]·b[1, col] + … + a[row, k-1]·b[k-1, col].

- `a` is an m×k float32 matrix, `b` is k×n, `c` is m×n; all three are device arrays
  (index them as a[row, kk]).
- `c` arrives filled with garbage: your kernel must write every element, exactly once.
- Use a 2-D grid with one thread per element of C. `cuda.grid(2)` returns (x, y): let x
  walk the columns and y the rows, so the 32 threads of a warp (neighbouring x) read
  neighbouring elements of a row of B and write neighbouring elements of C.
- Launch blocks = (ceil(n / threads_x), ceil(m / threads_y)) and guard with
  `if row < m and col < n:` — the last blocks stick out past the edges of C.
- Add the k products into a local float32 variable, then store it in c[row, col].

Each thread loads 2k numbers to do 2k flops (a multiply and an add per pair): this kernel is
limited by memory traffic, not arithmetic. The next exercise (matmul_tiled) fixes that.
"""
from numba import cuda, float32


@cuda.jit
def matmul_kernel(a, b, c):
    col, row = cuda.grid(2)  # x walks the columns of C, y its rows
    if row < c.shape[0] and col < c.shape[1]:
        acc = float32(0.0)
        for kk in range(a.shape[1]):
            acc += a[row, kk] * b[kk, col]
        c[row, col] = acc


def launch(a, b, c):
    m, n = c.shape
    threads = (16, 16)  # (x: columns, y: rows)
    blocks = ((n + threads[0] - 1) // threads[0], (m + threads[1] - 1) // threads[1])
    matmul_kernel[blocks, threads](a, b, c)

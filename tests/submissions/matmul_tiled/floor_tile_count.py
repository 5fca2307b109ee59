# expect: wrong_result
"""range(k // TILE) rounds down: the last, partial tile along k is never added (and for
k < 16 no tile at all)."""
from numba import cuda, float32

TILE = 16


@cuda.jit
def matmul_tiled_kernel(a, b, c):
    sa = cuda.shared.array((TILE, TILE), float32)
    sb = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    m, k = a.shape
    n = b.shape[1]

    acc = float32(0.0)
    for t in range(k // TILE):
        # Load one element of each tile, or 0.0 where the tile sticks out of the matrix.
        if row < m and t * TILE + tx < k:
            sa[ty, tx] = a[row, t * TILE + tx]
        else:
            sa[ty, tx] = 0.0
        if t * TILE + ty < k and col < n:
            sb[ty, tx] = b[t * TILE + ty, col]
        else:
            sb[ty, tx] = 0.0
        cuda.syncthreads()  # the whole tile is loaded
        for i in range(TILE):
            acc += sa[ty, i] * sb[i, tx]
        cuda.syncthreads()  # everyone is done with the tile before it is overwritten

    if row < m and col < n:
        c[row, col] = acc


def launch(a, b, c):
    m, n = c.shape
    blocks = ((n + TILE - 1) // TILE, (m + TILE - 1) // TILE)
    matmul_tiled_kernel[blocks, (TILE, TILE)](a, b, c)

"""matmul_tiled — multiply two matrices through shared-memory tiles.

Compute C = A @ B, like matmul_naive, but make every number loaded from global memory count
16 times instead of once.

- `a` is an m×k float32 matrix, `b` is k×n, `c` is m×n; `c` arrives filled with garbage:
  write every element exactly once.
- A block of TILE×TILE = 16×16 threads computes one 16×16 tile of C; thread (tx, ty) owns
  c[row, col] with row = blockIdx.y·16 + ty and col = blockIdx.x·16 + tx.
- Walk along k one tile at a time. At step t, each thread loads ONE element of A and ONE
  of B into shared memory:
      sa[ty, tx] = a[row, t·16 + tx]        sb[ty, tx] = b[t·16 + ty, col]
  then `cuda.syncthreads()` (wait until the whole tile is loaded), then adds
  sa[ty, i]·sb[i, tx] for i in 0..15, then `cuda.syncthreads()` again (wait until everyone
  is done with the tile before the next step overwrites it).
- m, n and k need not be multiples of 16: loop over ceil(k / 16) steps, and where the tile
  sticks out of A or B store 0.0 in the shared tile instead of loading (zeros add nothing).
  Every thread must reach every `cuda.syncthreads()`: guard the loads and the final store,
  never `return` early.
- Launch blocks = (ceil(n / 16), ceil(m / 16)) with threads = (16, 16).
"""
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
    for t in range((k + TILE - 1) // TILE):
        sa[ty, tx] = 0.0  # TODO: a[row, t * TILE + tx] where that is inside A, else 0.0
        sb[ty, tx] = 0.0  # TODO: b[t * TILE + ty, col] where that is inside B, else 0.0
        cuda.syncthreads()  # the whole tile is loaded
        for i in range(TILE):
            acc += sa[ty, i] * sb[i, tx]
        cuda.syncthreads()  # everyone is done with the tile before it is overwritten

    if row < m and col < n:
        c[row, col] = acc


def launch(a, b, c):
    m, n = c.shape
    blocks = (1, 1)  # TODO: (ceil(n / TILE), ceil(m / TILE)) blocks to cover all of C
    matmul_tiled_kernel[blocks, (TILE, TILE)](a, b, c)

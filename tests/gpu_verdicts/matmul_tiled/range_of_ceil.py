# expect: passed
# gpu: too_slow on an NVIDIA H100 (2026-12-07: 1.05x the baseline), correct
# defect: `range(math.ceil(k / TILE))` (CUDA MODE, lecture 5): Numba types math.ceil as an integer; the doctor handed a float to range and said `exception`
import math

import numpy as np
from numba import cuda, float32

TILE = 16


@cuda.jit
def matmul(a, b, c):
    sa = cuda.shared.array(0, float32)
    sb = sa[TILE * TILE :]
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    k = a.shape[1]
    acc = float32(0.0)
    for t in range(math.ceil(k / TILE)):
        ka = t * TILE + tx
        kb = t * TILE + ty
        sa[ty * TILE + tx] = a[row, ka] if row < a.shape[0] and ka < k else float32(0.0)
        sb[ty * TILE + tx] = b[kb, col] if kb < k and col < b.shape[1] else float32(0.0)
        cuda.syncthreads()
        for j in range(TILE):
            acc += sa[ty * TILE + j] * sb[j * TILE + tx]
        cuda.syncthreads()
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = acc


def launch(a, b, c):
    grid = ((c.shape[1] + TILE - 1) // TILE, (c.shape[0] + TILE - 1) // TILE)
    matmul[grid, (TILE, TILE), 0, 2 * TILE * TILE * np.dtype(np.float32).itemsize](a, b, c)

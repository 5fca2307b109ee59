# expect: bank_conflicts
"""A tiled transpose with a 32 × 32 tile: reading a column of the tile puts all 32 threads of a
warp on one bank."""
import numpy as np
from numba import cuda, float32

from grader.authoring.spec import Array

PARAMS = (Array("a", "float32", ("m", "n")), Array("out", "float32", ("n", "m"), role="out"))
DIMS = {"m": 64, "n": 64}
TILE = 32
COLUMNS = 32


@cuda.jit
def transpose(a, out):
    tile = cuda.shared.array((TILE, COLUMNS), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row0 = cuda.blockIdx.y * TILE
    col0 = cuda.blockIdx.x * TILE
    tile[ty, tx] = a[row0 + ty, col0 + tx]
    cuda.syncthreads()
    out[col0 + ty, row0 + tx] = tile[tx, ty]  # <- here


def launch(a, out):
    m, n = a.shape
    transpose[(n // TILE, m // TILE), (TILE, TILE)](a, out)


def expected(a):
    return {"out": np.ascontiguousarray(a.T).astype(np.float64)}

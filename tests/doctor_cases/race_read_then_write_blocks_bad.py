# expect: race
"""A forward difference computed in place: each block reads one element past its own range (the
halo), which the next block reads and then overwrites. Here blocks run one after another, so the
answer comes out right; on a GPU the next block may overwrite the element first."""
import numpy as np
from numba import cuda, float32

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", ("n",), role="out"))
DIMS = {"n": 256}
THREADS = 64
TILE = THREADS + 1


@cuda.jit
def copy(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i]


@cuda.jit
def forward_difference(y):
    tile = cuda.shared.array(TILE, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[tid] = y[i]
    if tid == THREADS - 1:
        tile[THREADS] = y[i + 1] if i + 1 < y.size else float32(0.0)  # <- here
    cuda.syncthreads()
    y[i] = tile[tid + 1] - tile[tid]


def launch(x, out):
    blocks = x.size // THREADS
    copy[blocks, THREADS](x, out)
    forward_difference[blocks, THREADS](out)


def expected(x):
    x = x.astype(np.float64)
    return {"out": np.concatenate([x[1:], [0.0]]) - x}

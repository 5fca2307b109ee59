# expect: clean
"""Fixed: read from the input and write the differences to another array, so no block writes
what another block reads."""
import numpy as np
from numba import cuda, float32

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", ("n",), role="out"))
DIMS = {"n": 256}
THREADS = 64
TILE = THREADS + 1


@cuda.jit
def forward_difference(x, out):
    tile = cuda.shared.array(TILE, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[tid] = x[i]
    if tid == THREADS - 1:
        tile[THREADS] = x[i + 1] if i + 1 < x.size else float32(0.0)
    cuda.syncthreads()
    out[i] = tile[tid + 1] - tile[tid]


def launch(x, out):
    forward_difference[x.size // THREADS, THREADS](x, out)


def expected(x):
    x = x.astype(np.float64)
    return {"out": np.concatenate([x[1:], [0.0]]) - x}

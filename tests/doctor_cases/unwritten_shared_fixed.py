# expect: clean
"""Fixed: thread 0 also loads the halo element (0 past the end of x)."""
import numpy as np
from numba import cuda, float32

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", ("n",), role="out"))
DIMS = {"n": 256}
THREADS = 128
TILE = THREADS + 1


@cuda.jit
def pair_sum(x, out):
    tile = cuda.shared.array(TILE, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[tid] = x[i]
    if tid == 0:
        j = i + THREADS
        tile[THREADS] = x[j] if j < x.size else float32(0.0)
    cuda.syncthreads()
    out[i] = tile[tid] + tile[tid + 1]


def launch(x, out):
    pair_sum[x.size // THREADS, THREADS](x, out)


def expected(x):
    x = x.astype(np.float64)
    return {"out": x + np.concatenate([x[1:], [0.0]])}

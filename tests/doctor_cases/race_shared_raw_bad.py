# expect: race
"""Each thread reads its right neighbour's shared slot without waiting for it to be written."""
import numpy as np
from numba import cuda, float32

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", ("n",), role="out"))
DIMS = {"n": 256}
THREADS = 128
TILE = THREADS + 1  # shared shapes must be module-level constants


@cuda.jit
def neighbour_sum(x, out):
    tile = cuda.shared.array(TILE, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[tid] = x[i]
    if tid == 0:
        j = i + THREADS
        tile[THREADS] = x[j] if j < x.size else float32(0.0)
    out[i] = tile[tid] + tile[tid + 1]  # <- here


def launch(x, out):
    neighbour_sum[x.size // THREADS, THREADS](x, out)


def expected(x):
    nxt = np.concatenate([x[1:], [0]]).astype(np.float64)
    return {"out": x + nxt}

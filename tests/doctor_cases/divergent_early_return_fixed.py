# expect: clean
"""Fixed: guard the work, not the barrier: every thread reaches cuda.syncthreads()."""
import numpy as np
from numba import cuda, float32

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", ("n",), role="out"))
DIMS = {"n": 100}
THREADS = 128


@cuda.jit
def reverse_block(x, out):
    tile = cuda.shared.array(THREADS, float32)
    tid = cuda.threadIdx.x
    n = x.size
    if tid < n:
        tile[tid] = x[tid]
    cuda.syncthreads()
    if tid < n:
        out[tid] = tile[n - 1 - tid]


def launch(x, out):
    reverse_block[1, THREADS](x, out)


def expected(x):
    return {"out": x[::-1].astype(np.float64)}

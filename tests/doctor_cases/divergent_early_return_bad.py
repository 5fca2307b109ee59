# expect: divergent_barrier
"""Threads past the end return before the barrier that the others wait at."""
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
    if tid >= n:
        return
    tile[tid] = x[tid]
    cuda.syncthreads()  # <- here
    out[tid] = tile[n - 1 - tid]


def launch(x, out):
    reverse_block[1, THREADS](x, out)


def expected(x):
    return {"out": x[::-1].astype(np.float64)}

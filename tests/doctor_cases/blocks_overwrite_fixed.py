# expect: clean
"""Fixed: each block adds its count atomically."""
import numpy as np
from numba import cuda, int32

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("count", "int32", (1,), role="out", init="zeros"))
DIMS = {"n": 300}
THREADS = 128


@cuda.jit
def count_positive(x, count):
    hits = cuda.shared.array(1, int32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    if tid == 0:
        hits[0] = 0
    cuda.syncthreads()
    if i < x.size and x[i] > 0:
        cuda.atomic.add(hits, 0, 1)
    cuda.syncthreads()
    if tid == 0:
        cuda.atomic.add(count, 0, hits[0])


def launch(x, count):
    count_positive[(x.size + THREADS - 1) // THREADS, THREADS](x, count)


def expected(x):
    return {"count": np.array([(x > 0).sum()])}

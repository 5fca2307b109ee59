# expect: clean
"""Counts into shared memory with an atomic. One dynamic shared buffer holds the counts
(int32) and the staged bytes (uint8): the doctor cannot read one memory as two dtypes, so
Numba's simulator runs it."""
from numba import cuda, int32, uint8

from grader.authoring.spec import Array

PARAMS = (Array("values", "uint8", ("n",), "in"), Array("bins", "int32", (16,), "out", init="zeros"))
DIMS = {"n": 64}


@cuda.jit
def count(values, bins):
    counts = cuda.shared.array(0, int32)
    staged = cuda.shared.array(0, uint8)
    tid = cuda.threadIdx.x
    if tid < 16:
        counts[tid] = 0
    staged[64 + tid] = values[tid] % 16
    cuda.syncthreads()
    cuda.atomic.add(counts, staged[64 + tid], 1)
    cuda.syncthreads()
    if tid < 16:
        cuda.atomic.add(bins, tid, counts[tid])


def launch(values, bins):
    count[1, 64, 0, 128](values, bins)


def expected(values):
    import numpy as np

    return {"bins": np.bincount(values % 16, minlength=16).astype(np.int32)}

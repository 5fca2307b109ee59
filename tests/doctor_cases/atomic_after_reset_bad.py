# expect: race
"""Threads count into a shared histogram right after zeroing their own bin, without waiting for
the others to zero theirs: a late thread resets a bin that others already counted into."""
import numpy as np
from numba import cuda, int32

from grader.authoring.spec import Array

PARAMS = (Array("values", "uint8", ("n",)), Array("bins", "int32", (16,), role="out", init="zeros"))
DIMS = {"n": 64}
BINS = 16


@cuda.jit
def histogram(values, bins):
    local = cuda.shared.array(BINS, int32)
    tid = cuda.threadIdx.x
    if tid < BINS:
        local[tid] = 0  # <- here
    cuda.atomic.add(local, values[tid] % BINS, 1)
    cuda.syncthreads()
    if tid < BINS:
        cuda.atomic.add(bins, tid, local[tid])


def launch(values, bins):
    histogram[1, 64](values, bins)


def expected(values):
    return {"bins": np.bincount(values % BINS, minlength=BINS)}

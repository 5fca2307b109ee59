# expect: race
"""The first thread of the grid zeroes the total inside the kernel that adds to it, and the
barrier after the store orders it for block 0 only: the other blocks may already be adding
with atomics, so on a GPU the store can wipe out their sums. The doctor runs block 0 first (and
block 0's own atomics come after the store), so the total comes out right here: the plain
store and the atomics of other blocks on one element are what it must catch."""
import numpy as np
from numba import cuda

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", (1,), role="out"))
DIMS = {"n": 200}


@cuda.jit
def sum_of_squares(x, out):
    i = cuda.grid(1)
    if i == 0:
        out[0] = 0.0  # <- here
    cuda.syncthreads()
    if i < x.size:
        cuda.atomic.add(out, 0, x[i] * x[i])


def launch(x, out):
    sum_of_squares[(x.size + 63) // 64, 64](x, out)


def expected(x):
    return {"out": np.array([np.sum(x.astype(np.float64) ** 2)], dtype=np.float32)}

# expect: uninitialised_global
"""Per-block totals in scratch memory from cuda.device_array, added to with atomics but never
zeroed: the first atomic adds to garbage."""
import numpy as np
from numba import cuda

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", ("blocks",), role="out"))
DIMS = {"n": 256, "blocks": 2}
THREADS = 128


@cuda.jit
def block_totals(x, totals):
    i = cuda.grid(1)
    cuda.atomic.add(totals, cuda.blockIdx.x, x[i])  # <- here


@cuda.jit
def copy(totals, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = totals[i]


def launch(x, out):
    totals = cuda.device_array(out.size, np.float32)
    block_totals[out.size, THREADS](x, totals)
    copy[1, 32](totals, out)


def expected(x):
    return {"out": x.astype(np.float64).reshape(2, THREADS).sum(axis=1)}

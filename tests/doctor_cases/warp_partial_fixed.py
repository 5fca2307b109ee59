# expect: clean
"""Whole warps: the block is rounded up to a multiple of 32, and the threads past the end take
part with 0."""
import numpy as np
from numba import cuda

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", (1,), role="out", init="zeros"))
DIMS = {"n": 40}
FULL = 0xFFFFFFFF


@cuda.jit
def total(x, out):
    i = cuda.grid(1)
    value = x.dtype.type(0)
    if i < x.size:
        value = x[i]
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(FULL, value, offset)
        offset //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, value)


def launch(x, out):
    total[1, (x.size + 31) // 32 * 32](x, out)


def expected(x):
    return {"out": np.array([x.astype(np.float64).sum()])}

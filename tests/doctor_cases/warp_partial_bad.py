# expect: warp_inactive_lane
"""One block of n threads: with n = 40 the second warp has 8 lanes, and a shuffle with the full
mask reads lanes 8-31 of it, which do not exist (undefined on a GPU)."""
import numpy as np
from numba import cuda

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", (1,), role="out", init="zeros"))
DIMS = {"n": 40}
FULL = 0xFFFFFFFF


@cuda.jit
def total(x, out):
    i = cuda.grid(1)
    value = x[i]
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(FULL, value, offset)  # <- here
        offset //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, value)


def launch(x, out):
    total[1, x.size](x, out)


def expected(x):
    return {"out": np.array([x.astype(np.float64).sum()])}

# expect: warp_mask
"""`1 << 32 - 1` is 1 << 31 (the minus binds first): the mask names lane 31 only, so every
other lane calls the shuffle with a mask that leaves itself out."""
import numpy as np
from numba import cuda, float32

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", (1,), role="out", init="zeros"))
DIMS = {"n": 64}
MASK = 1 << 32 - 1


@cuda.jit
def total(x, out):
    i = cuda.grid(1)
    value = float32(0.0)
    if i < x.size:
        value = x[i]
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(MASK, value, offset)  # <- here
        offset //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, value)


def launch(x, out):
    total[2, 32](x, out)


def expected(x):
    return {"out": np.array([x.astype(np.float64).sum()])}

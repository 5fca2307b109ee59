# expect: clean
"""Fixed: a cuda.syncwarp() after every step orders the lanes' shared-memory accesses."""
import numpy as np
from numba import cuda, float32

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", (2,), role="out"))
DIMS = {"n": 64}


@cuda.jit
def per_warp(x, out):
    partial = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    lane = t % 32
    partial[t] = x[t]
    cuda.syncwarp()
    offset = 16
    while offset > 0:
        if lane < offset:
            partial[t] += partial[t + offset]
        cuda.syncwarp()
        offset //= 2
    if lane == 0:
        out[t // 32] = partial[t]


def launch(x, out):
    per_warp[1, 64](x, out)


def expected(x):
    x = x.astype(np.float64)
    return {"out": np.array([x[:32].sum(), x[32:].sum()])}

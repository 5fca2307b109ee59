# expect: clean
"""Fixed: every lane takes part in the shuffles, lanes past the end with 0."""
import numpy as np
from numba import cuda, float32

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", (1,), role="out", init="zeros"))
DIMS = {"n": 50}
THREADS = 64
WARPS = THREADS // 32
FULL = 0xFFFFFFFF


@cuda.jit(device=True)
def warp_sum(value):
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(FULL, value, offset)
        offset //= 2
    return value


@cuda.jit
def total(x, out):
    per_warp = cuda.shared.array(WARPS, float32)
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    value = float32(0.0)
    if i < x.size:
        value = x[i]
    value = warp_sum(value)
    if lane == 0:
        per_warp[cuda.threadIdx.x // 32] = value
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(out, 0, per_warp[0] + per_warp[1])


def launch(x, out):
    total[1, THREADS](x, out)


def expected(x):
    return {"out": np.array([x.astype(np.float64).sum()])}

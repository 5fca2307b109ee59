# expect: race
"""A block scan whose second barrier is missing: warp 0 scans the warps' totals in place while
warps 1-3 read them (what warp 0 writes, before or after it writes: nothing orders them)."""
import numpy as np
from numba import cuda, float32

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", ("n",), role="out"))
DIMS = {"n": 128}
FULL = 0xFFFFFFFF


@cuda.jit(device=True)
def warp_scan(value, lane):
    offset = 1
    while offset < 32:
        below = cuda.shfl_up_sync(FULL, value, offset)
        if lane >= offset:
            value += below
        offset *= 2
    return value


@cuda.jit
def block_scan(x, out):
    totals = cuda.shared.array(4, float32)
    i = cuda.grid(1)
    lane, warp = cuda.threadIdx.x % 32, cuda.threadIdx.x // 32
    value = warp_scan(x[i], lane)
    if lane == 31:
        totals[warp] = value
    cuda.syncthreads()
    if warp == 0:
        total = float32(0.0)
        if lane < 4:
            total = totals[lane]
        total = warp_scan(total, lane)
        if lane < 4:
            totals[lane] = total  # <- here
    if warp > 0:
        value += totals[warp - 1]  # <- here
    out[i] = value


def launch(x, out):
    block_scan[1, 128](x, out)


def expected(x):
    return {"out": np.cumsum(x.astype(np.float64))}

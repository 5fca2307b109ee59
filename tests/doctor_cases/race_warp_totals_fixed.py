# expect: clean
"""The same block scan with its second barrier: warps 1-3 read the totals once warp 0 has
scanned them."""
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
            totals[lane] = total
    cuda.syncthreads()
    if warp > 0:
        value += totals[warp - 1]
    out[i] = value


def launch(x, out):
    block_scan[1, 128](x, out)


def expected(x):
    return {"out": np.cumsum(x.astype(np.float64))}

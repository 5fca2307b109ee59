# expect: missing_atomic
"""A correct tree reduction per block, but thread 0 of each block adds the block's sum to out[0]
with `+=`: blocks overlap on a GPU (not here, where they run one after another), and one
block's update is lost."""
import numpy as np
from numba import cuda, float32

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", (1,), role="out", init="zeros"))
DIMS = {"n": 300}
THREADS = 64


@cuda.jit
def block_sums(x, out):
    partial = cuda.shared.array(THREADS, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    partial[tid] = x[i] if i < x.size else float32(0.0)
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if tid < stride:
            partial[tid] += partial[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        out[0] += partial[0]  # <- here


def launch(x, out):
    block_sums[(x.size + THREADS - 1) // THREADS, THREADS](x, out)


def expected(x):
    return {"out": np.array([x.astype(np.float64).sum()])}

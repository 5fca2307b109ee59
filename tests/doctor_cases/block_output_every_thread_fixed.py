# expect: clean
"""Fixed: thread 0 stores the block's sum, partial[0], once."""
import numpy as np
from numba import cuda, float32

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", ("blocks",), role="out"))
DIMS = {"n": 256, "blocks": 4}
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
        out[cuda.blockIdx.x] = partial[0]


def launch(x, out):
    block_sums[out.size, THREADS](x, out)


def expected(x):
    return {"out": x.astype(np.float64).reshape(-1, THREADS).sum(axis=1)}

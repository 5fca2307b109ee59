# expect: divergent_barrier
"""The tree reduction puts cuda.syncthreads() inside `if tid < stride`: the threads that skip
the branch skip the barrier."""
import numpy as np
from numba import cuda, float32

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", (1,), role="out", init="zeros"))
DIMS = {"n": 64}
THREADS = 64


@cuda.jit
def tree(x, out):
    partial = cuda.shared.array(THREADS, float32)
    tid = cuda.threadIdx.x
    partial[tid] = x[tid]
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if tid < stride:
            partial[tid] += partial[tid + stride]
            cuda.syncthreads()  # <- here
        stride //= 2
    if tid == 0:
        out[0] = partial[0]


def launch(x, out):
    tree[1, THREADS](x, out)


def expected(x):
    return {"out": np.array([x.astype(np.float64).sum()])}

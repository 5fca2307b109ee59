# expect: race
"""A block's tree sum with no cuda.syncthreads() between its steps: a thread reads a partial
sum its neighbour has not written yet. It asks for the grid (cooperative groups), which the
doctor cannot run, so Numba's simulator runs it."""
from numba import cuda, float32

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", (64,), "in"), Array("out", "float32", (1,), "out"))
DIMS = {}


@cuda.jit
def block_sum(x, out):
    partial = cuda.shared.array(64, float32)
    tid = cuda.threadIdx.x
    cuda.cg.this_grid()
    partial[tid] = x[tid]
    cuda.syncthreads()
    stride = 32
    while stride > 0:
        if tid < stride:
            partial[tid] += partial[tid + stride]  # <- here
        stride //= 2
    cuda.syncthreads()
    if tid == 0:
        out[0] = partial[0]


def launch(x, out):
    block_sum[1, 64](x, out)


def expected(x):
    import numpy as np

    return {"out": np.array([x.astype(np.float64).sum()], dtype=np.float32)}

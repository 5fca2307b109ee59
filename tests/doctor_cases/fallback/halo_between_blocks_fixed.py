# expect: clean
"""Smooths `x` into `a`: each thread averages its element with its right neighbour's, read from
the input, which no block writes. The block
stages values in one dynamic shared buffer read as float32 and as int32 (the doctor cannot
follow that, so Numba's simulator runs it)."""
from numba import cuda, float32, int32

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", (64,), "in"), Array("a", "float32", (64,), "out"))
DIMS = {}


@cuda.jit
def smooth(x, a):
    staged = cuda.shared.array(0, float32)
    flag = cuda.shared.array(0, int32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    staged[tid] = x[i]
    if tid == 0:
        flag[40] = 1
    cuda.syncthreads()
    if i + 1 < a.size:
        a[i] = (staged[tid] + x[i + 1]) / 2
    else:
        a[i] = x[i]


def launch(x, a):
    smooth[2, 32, 0, 41 * 4](x, a)


def expected(x):
    import numpy as np

    out = x.copy()
    out[:-1] = (x[:-1] + x[1:]) / 2
    return {"a": out}

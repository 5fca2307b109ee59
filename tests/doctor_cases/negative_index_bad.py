# expect: out_of_bounds
"""A backward difference without a guard for i = 0: x[-1] wraps around to the last element on
a GPU instead of failing."""
import numpy as np
from numba import cuda

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", ("n",), role="out"))
DIMS = {"n": 200}


@cuda.jit
def difference(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] - x[i - 1]  # <- here


def launch(x, out):
    difference[(x.size + 127) // 128, 128](x, out)


def expected(x):
    x = x.astype(np.float64)
    return {"out": x - np.concatenate([[0.0], x[:-1]])}

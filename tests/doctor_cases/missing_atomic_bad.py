# expect: missing_atomic
"""Every thread adds its element to out[0] with `+=`: a read-modify-write that loses updates."""
import numpy as np
from numba import cuda

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", (1,), role="out", init="zeros"))
DIMS = {"n": 300}


@cuda.jit
def total(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[0] += x[i]  # <- here


def launch(x, out):
    total[(x.size + 127) // 128, 128](x, out)


def expected(x):
    return {"out": np.array([x.astype(np.float64).sum()])}

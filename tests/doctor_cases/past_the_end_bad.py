# expect: out_of_bounds
"""A forward difference that reads x[i + 1] for the last element too."""
import numpy as np
from numba import cuda

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", ("n",), role="out"))
DIMS = {"n": 200}


@cuda.jit
def difference(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i + 1] - x[i]  # <- here


def launch(x, out):
    difference[(x.size + 127) // 128, 128](x, out)


def expected(x):
    x = x.astype(np.float64)
    return {"out": np.concatenate([x[1:], [0.0]]) - x}

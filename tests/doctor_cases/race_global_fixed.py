# expect: clean
"""Fixed: read the neighbour from the input, which nobody writes."""
import numpy as np
from numba import cuda

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", ("n",), role="out"))
DIMS = {"n": 64}


@cuda.jit
def shift_add(x, out):
    i = cuda.grid(1)
    before = x[i - 1] if i > 0 else 0.0
    out[i] = x[i] + before


def launch(x, out):
    shift_add[1, 64](x, out)


def expected(x):
    x = x.astype(np.float64)
    return {"out": x + np.concatenate([[0.0], x[:-1]])}

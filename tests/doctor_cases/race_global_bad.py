# expect: race
"""In-place prefix step: thread i reads x[i - 1] while thread i - 1 overwrites it, in global
memory, with nothing ordering them."""
import numpy as np
from numba import cuda

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", ("n",), role="out"))
DIMS = {"n": 64}


@cuda.jit
def shift_add(x, out):
    i = cuda.grid(1)
    out[i] = x[i]
    if i > 0:
        out[i] = out[i] + out[i - 1]  # <- here


def launch(x, out):
    shift_add[1, 64](x, out)


def expected(x):
    x = x.astype(np.float64)
    return {"out": x + np.concatenate([[0.0], x[:-1]])}

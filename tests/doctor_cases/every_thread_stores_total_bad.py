# expect: duplicate_write
"""Every thread adds up the whole (short) input and stores the total into out[0]: the right
total, stored by all 64 threads."""
import numpy as np
from numba import cuda, float32

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", (1,), role="out"))
DIMS = {"n": 64}


@cuda.jit
def total(x, out):
    s = float32(0.0)
    for k in range(x.size):
        s += x[k]
    out[0] = s  # <- here


def launch(x, out):
    total[1, 64](x, out)


def expected(x):
    return {"out": np.array([x.astype(np.float64).sum()])}

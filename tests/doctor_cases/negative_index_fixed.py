# expect: clean
"""Fixed: x[i - 1] only when i >= 1 (x before the start counts as 0)."""
import numpy as np
from numba import cuda

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", ("n",), role="out"))
DIMS = {"n": 200}


@cuda.jit
def difference(x, out):
    i = cuda.grid(1)
    if i < x.size:
        before = x[i - 1] if i >= 1 else 0.0
        out[i] = x[i] - before


def launch(x, out):
    difference[(x.size + 127) // 128, 128](x, out)


def expected(x):
    x = x.astype(np.float64)
    return {"out": x - np.concatenate([[0.0], x[:-1]])}

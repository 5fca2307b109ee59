# expect: clean
"""Fixed: cuda.atomic.add makes each update indivisible."""
import numpy as np
from numba import cuda

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", (1,), role="out", init="zeros"))
DIMS = {"n": 300}


@cuda.jit
def total(x, out):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(out, 0, x[i])


def launch(x, out):
    total[(x.size + 127) // 128, 128](x, out)


def expected(x):
    return {"out": np.array([x.astype(np.float64).sum()])}

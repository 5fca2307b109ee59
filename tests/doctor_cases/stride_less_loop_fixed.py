# expect: clean
"""Fixed: the loop steps by the whole grid, so every element has one thread."""
import numpy as np
from numba import cuda

from grader.authoring.spec import Array

PARAMS = (
    Array("a", "float32", ("n",)),
    Array("b", "float32", ("n",)),
    Array("out", "float32", ("n",), role="out"),
)
DIMS = {"n": 500}


@cuda.jit
def add(a, b, out):
    i = cuda.grid(1)
    for j in range(i, out.size, cuda.gridsize(1)):
        out[j] = a[j] + b[j]


def launch(a, b, out):
    add[2, 64](a, b, out)


def expected(a, b):
    return {"out": a.astype(np.float64) + b}

# expect: clean
"""Fixed: read what block b - 1 started from (the input), not what it wrote."""
import numpy as np
from numba import cuda

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("n",)), Array("out", "float32", ("n",), role="out"))
DIMS = {"n": 256}
THREADS = 64


@cuda.jit
def chain(x, out):
    i = cuda.grid(1)
    out[i] = x[i]
    if cuda.threadIdx.x == 0 and cuda.blockIdx.x > 0:
        out[i] = x[i] + x[i - THREADS]


def launch(x, out):
    chain[x.size // THREADS, THREADS](x, out)


def expected(x):
    x = x.astype(np.float64)
    out = x.copy()
    out[THREADS::THREADS] += x[:-THREADS:THREADS]
    return {"out": out}

# expect: race
"""Block b reads the first output of block b - 1: blocks run in any order and never wait for
each other, so it may read it before block b - 1 has written it."""
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
        out[i] = x[i] + out[i - THREADS]  # <- here


def launch(x, out):
    chain[x.size // THREADS, THREADS](x, out)


def expected(x):
    x = x.astype(np.float64)
    out = x.copy()
    out[THREADS::THREADS] += x[:-THREADS:THREADS]
    return {"out": out}

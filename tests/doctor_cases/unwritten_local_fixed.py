# expect: clean
"""Fixed: every partial sum starts at zero."""
import numpy as np
from numba import cuda, float32

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", ("rows", "cols")), Array("out", "float32", ("cols",), role="out"))
DIMS = {"rows": 9, "cols": 70}
THREADS = 32
PARTS = 4


@cuda.jit
def column_sums(x, out):
    c = cuda.grid(1)
    if c < x.shape[1]:
        part = cuda.local.array(PARTS, float32)
        for k in range(PARTS):
            part[k] = float32(0.0)
        for j in range(x.shape[0]):
            part[j % PARTS] += x[j, c]
        total = float32(0.0)
        for k in range(PARTS):
            total += part[k]
        out[c] = total


def launch(x, out):
    column_sums[(x.shape[1] + THREADS - 1) // THREADS, THREADS](x, out)


def expected(x):
    return {"out": x.astype(np.float64).sum(axis=0)}

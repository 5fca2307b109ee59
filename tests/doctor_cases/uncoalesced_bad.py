# expect: uncoalesced
"""Scale a matrix with threadIdx.x walking its rows: the 32 threads of a warp touch 32 rows."""
import numpy as np
from numba import cuda

from grader.authoring.spec import Array

PARAMS = (Array("a", "float32", ("m", "n")), Array("out", "float32", ("m", "n"), role="out"))
DIMS = {"m": 64, "n": 64}


@cuda.jit
def scale(a, out):
    row, col = cuda.grid(2)
    if row < a.shape[0] and col < a.shape[1]:
        out[row, col] = 2.0 * a[row, col]  # <- here


def launch(a, out):
    m, n = a.shape
    scale[((m + 31) // 32, (n + 7) // 8), (32, 8)](a, out)


def expected(a):
    return {"out": 2.0 * a.astype(np.float64)}

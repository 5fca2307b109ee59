# expect: race
"""Block 0 zeroes the total, then every block adds its part with an atomic: the barrier orders
the store for block 0 only, and the other blocks may already be adding, so on a GPU the store
can wipe out their parts. The block's scratch is one dynamic shared buffer read as float32 and
as int32 (the doctor cannot follow that, so Numba's simulator runs it)."""
from numba import cuda, float32, int32

from grader.authoring.spec import Array

PARAMS = (Array("x", "float32", (96,), "in"), Array("out", "float32", (1,), "out"))
DIMS = {}


@cuda.jit
def sum_blocks(x, out):
    partial = cuda.shared.array(0, float32)
    live = cuda.shared.array(0, int32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    partial[tid] = x[i]
    if tid == 0:
        live[32] = 32
        if cuda.blockIdx.x == 0:
            out[0] = 0.0  # <- here
    cuda.syncthreads()
    if tid == 0:
        total = float32(0)
        for k in range(live[32]):
            total += partial[k]
        cuda.atomic.add(out, 0, total)


def launch(x, out):
    sum_blocks[3, 32, 0, 33 * 4](x, out)


def expected(x):
    import numpy as np

    return {"out": np.array([x.astype(np.float64).sum()], dtype=np.float32)}

# exercise: matmul_naive
# expect: exception
"""Correct at every case's size, but `launch` uploads a host table as large as the output: at
the benchmark's size that is far over what a plan may upload. The CPU records at that size too,
so the verdict is the GPU's."""
import numpy as np
from numba import cuda


@cuda.jit
def matmul(a, b, c, order):
    k = cuda.grid(1)
    if k < c.size:
        i = order[k] // c.shape[1]
        j = order[k] % c.shape[1]
        acc = 0.0
        for t in range(a.shape[1]):
            acc += a[i, t] * b[t, j]
        c[i, j] = acc


def launch(a, b, c):
    order = cuda.to_device(np.arange(c.size, dtype=np.int32))
    matmul[(c.size + 127) // 128, 128](a, b, c, order)

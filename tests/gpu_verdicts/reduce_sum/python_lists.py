# expect: exception
# gpu: exception on an NVIDIA H200 too (2026-11-30, driver 580.159.04, numba-cuda 0.30.4: `ZEROGPU_BACKEND=gpu zerogpu check reduce_sum tests/gpu_verdicts/reduce_sum/python_lists.py --json --seed 7`)
# defect: a "kernel" built from Python lists, max() and math.fsum ran on the CPU engines
import math

from numba import cuda


@cuda.jit
def total(x, out):
    i = cuda.grid(1)
    if i == 0:
        values = [x[0], x[0]]
        biggest = max(values)
        out[0] = math.fsum(values) - biggest
        for j in range(1, x.size):
            out[0] += x[j]


def launch(x, out):
    total[1, 32](x, out)

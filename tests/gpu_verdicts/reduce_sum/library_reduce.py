# expect: forbidden
# gpu: forbidden on an NVIDIA H200 too (2026-11-30, driver 580.159.04, numba-cuda 0.30.4: `ZEROGPU_BACKEND=gpu zerogpu check reduce_sum tests/gpu_verdicts/reduce_sum/library_reduce.py --json --seed 7`)
# defect: `@cuda.reduce` builds the reduction kernel; the learner wrote none
from numba import cuda


@cuda.reduce
def add(a, b):
    return a + b


def launch(x, out):
    add(x, res=out)

# expect: wrong_result
# gpu: wrong_result on an NVIDIA H200 too (2026-11-30, driver 580.159.04, numba-cuda 0.30.4: `ZEROGPU_BACKEND=gpu zerogpu check softmax_fused tests/gpu_verdicts/softmax_fused/no_max_subtraction.py --json --seed 7`)
# defect: float32 math.exp(90) overflows to inf on a GPU, so inf / inf = NaN; a CPU computing in Python floats passed it
import math

from numba import cuda


@cuda.jit
def softmax_rows(x, out):
    row = cuda.grid(1)
    if row < x.shape[0]:
        total = 0.0
        for j in range(x.shape[1]):
            total += math.exp(x[row, j])
        for j in range(x.shape[1]):
            out[row, j] = math.exp(x[row, j]) / total


def launch(x, out):
    softmax_rows[(x.shape[0] + 63) // 64, 64](x, out)

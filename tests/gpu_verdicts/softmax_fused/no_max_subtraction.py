# expect: wrong_result
# gpu: the row [90, 1, 2] gives [nan, 0, 0] on an H200 (measured); this file's verdict to confirm on a GPU
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

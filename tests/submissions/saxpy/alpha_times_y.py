# expect: wrong_result
"""Scales the wrong vector: x + alpha * y."""
from numba import cuda


@cuda.jit
def saxpy_kernel(x, y, out, alpha):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, out.size, stride):
        out[i] = x[i] + alpha * y[i]


def launch(x, y, out, alpha):
    blocks = min((out.size + 511) // 512, 4096)
    saxpy_kernel[blocks, 128](x, y, out, alpha)

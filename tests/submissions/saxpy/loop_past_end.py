# expect: out_of_bounds
"""The loop runs while i <= n: the thread that reaches i == n reads x[n], past the end."""
from numba import cuda


@cuda.jit
def saxpy_kernel(x, y, out, alpha):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, out.size + 1, stride):
        out[i] = alpha * x[i] + y[i]


def launch(x, y, out, alpha):
    blocks = min((out.size + 511) // 512, 4096)
    saxpy_kernel[blocks, 128](x, y, out, alpha)

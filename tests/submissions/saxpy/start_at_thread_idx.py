# expect: unwritten_output
"""The loop starts at threadIdx.x instead of the global index: every block does the same
elements (those of block 0, 1024 apart) and the rest are never written."""
from numba import cuda


@cuda.jit
def saxpy_kernel(x, y, out, alpha):
    start = cuda.threadIdx.x
    stride = cuda.gridsize(1)
    for i in range(start, out.size, stride):
        out[i] = alpha * x[i] + y[i]


def launch(x, y, out, alpha):
    saxpy_kernel[8, 128](x, y, out, alpha)

# expect: unwritten_output
"""The loop starts at threadIdx.x instead of the global index: every block does the same
elements as block 0, and those of the other blocks are never written."""
from numba import cuda


@cuda.jit
def saxpy_kernel(x, y, out, alpha):
    start = cuda.threadIdx.x
    stride = cuda.gridsize(1)
    for i in range(start, out.size, stride):
        out[i] = alpha * x[i] + y[i]


def launch(x, y, out, alpha):
    blocks = min((out.size + 511) // 512, 4096)
    saxpy_kernel[blocks, 128](x, y, out, alpha)

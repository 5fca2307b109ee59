# expect: timeout
"""A grid-stride `while` loop whose step went missing: without `i += stride` a thread goes
round its first element forever, and the kernel never ends."""
from numba import cuda


@cuda.jit
def saxpy_kernel(x, y, out, alpha):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < out.size:
        out[i] = alpha * x[i] + y[i]
        # the next element of this thread would be i + stride


def launch(x, y, out, alpha):
    threads_per_block = 128
    per_block = 4 * threads_per_block
    blocks = min((out.size + per_block - 1) // per_block, 4096)
    saxpy_kernel[blocks, threads_per_block](x, y, out, alpha)

# expect: unwritten_output
"""A grid hard-coded to 4 blocks of 128 threads: fine up to n = 512, then the tail of `out`
is never written."""
from numba import cuda


@cuda.jit
def ids_kernel(out):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < out.size:
        out[i] = i


def launch(out):
    ids_kernel[4, 128](out)

# expect: unwritten_output
"""The index leaves out threadIdx.x: every thread of a block writes the block's first element."""
from numba import cuda


@cuda.jit
def ids_kernel(out):
    i = cuda.blockIdx.x * cuda.blockDim.x
    if i < out.size:
        out[i] = i


def launch(out):
    threads_per_block = 128
    blocks = (out.size + threads_per_block - 1) // threads_per_block
    ids_kernel[blocks, threads_per_block](out)

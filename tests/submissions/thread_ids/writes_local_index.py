# expect: wrong_result
"""Writes threadIdx.x (the index inside the block) instead of the global index: right from
block 0, wrong from block 1 on."""
from numba import cuda


@cuda.jit
def ids_kernel(out):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < out.size:
        out[i] = cuda.threadIdx.x


def launch(out):
    threads_per_block = 128
    blocks = (out.size + threads_per_block - 1) // threads_per_block
    ids_kernel[blocks, threads_per_block](out)

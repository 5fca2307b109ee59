# expect: out_of_bounds
"""No bounds guard: the threads of the last block past n write past the end of `out`."""
from numba import cuda


@cuda.jit
def ids_kernel(out):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    out[i] = i


def launch(out):
    threads_per_block = 128
    blocks = (out.size + threads_per_block - 1) // threads_per_block
    ids_kernel[blocks, threads_per_block](out)

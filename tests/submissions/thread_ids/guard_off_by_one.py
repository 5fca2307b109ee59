# expect: out_of_bounds
"""Guard with `<=`: the thread with i == n writes one element past the end of `out`."""
from numba import cuda


@cuda.jit
def ids_kernel(out):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i <= out.size:
        out[i] = i


def launch(out):
    threads_per_block = 128
    blocks = (out.size + threads_per_block - 1) // threads_per_block
    ids_kernel[blocks, threads_per_block](out)

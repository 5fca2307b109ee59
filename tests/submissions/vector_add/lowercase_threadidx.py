# expect: exception
"""`cuda.threadidx` for `cuda.threadIdx`: names in numba.cuda are case-sensitive."""
from numba import cuda


@cuda.jit
def add_kernel(a, b, c):
    i = cuda.threadidx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i < c.size:
        c[i] = a[i] + b[i]


def launch(a, b, c):
    threads_per_block = 128
    blocks = (c.size + threads_per_block - 1) // threads_per_block
    add_kernel[blocks, threads_per_block](a, b, c)

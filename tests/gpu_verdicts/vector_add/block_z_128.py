# expect: exception
# gpu: exception, reasoned from numba-cuda 0.30.4's source, not yet measured on a GPU and CUDA's limits (a block's z is at most 64: cuLaunchKernel answers CUDA_ERROR_INVALID_VALUE)
# defect: a block of 8 × 1 × 128 threads (1024 in all) ran on the CPU engines
from numba import cuda


@cuda.jit
def add(a, b, c):
    i = cuda.blockIdx.x * 1024 + cuda.threadIdx.z * 8 + cuda.threadIdx.x
    if i < c.size:
        c[i] = a[i] + b[i]


def launch(a, b, c):
    add[(c.size + 1023) // 1024, (8, 1, 128)](a, b, c)

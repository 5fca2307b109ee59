# expect: exception
# gpu: exception, reasoned from numba-cuda 0.30.4's source, not yet measured on a GPU and CUDA's limits (n = 1 gives a grid of 0 blocks: cuLaunchKernel answers CUDA_ERROR_INVALID_VALUE)
# defect: the CPU gave wrong_result (nothing written) where a GPU refuses the launch
from numba import cuda


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def launch(a, b, c):
    add[c.size // 128, 128](a, b, c)

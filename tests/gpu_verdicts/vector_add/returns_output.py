# expect: exception
# gpu: to confirm on a GPU (numba-cuda's compiler, run here, refuses it: "CUDA kernel must have void return type")
# defect: a kernel ending in `return c` ran on the CPU engines
from numba import cuda


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]
    return c


def launch(a, b, c):
    add[(c.size + 127) // 128, 128](a, b, c)

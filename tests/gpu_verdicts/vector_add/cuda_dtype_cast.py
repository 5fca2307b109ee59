# expect: passed
# gpu: to confirm on a GPU
# defect: `cuda.float32(...)` exists in numba-cuda; the CPU engines refused it
from numba import cuda


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = cuda.float32(a[i]) + b[i]


def launch(a, b, c):
    add[(c.size + 127) // 128, 128](a, b, c)

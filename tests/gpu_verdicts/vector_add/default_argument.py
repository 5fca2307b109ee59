# expect: exception
# gpu: exception, reasoned from numba-cuda 0.30.4's source, not yet measured on a GPU (a launch folds the omitted argument into types.Omitted; the issue's H200 run refused it)
# defect: a non-constant-looking default (`axis=-1`) left the kernel unchecked, and it passed
from numba import cuda


@cuda.jit
def add(a, b, c, axis=-1):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def launch(a, b, c):
    add[(c.size + 127) // 128, 128](a, b, c)

# expect: exception
# gpu: exception, reasoned from numba-cuda 0.30.4's source, not yet measured on a GPU (a reflected list is no constant numba-cuda can freeze into a kernel; the issue's H200 run refused it)
# defect: the compile check could not describe the list, left the kernel unchecked, and it passed
from numba import cuda

WEIGHTS = [1.0, 1.0]


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = WEIGHTS[0] * a[i] + WEIGHTS[1] * b[i]


def launch(a, b, c):
    add[(c.size + 127) // 128, 128](a, b, c)

# expect: exception
# gpu: exception, reasoned from numba-cuda 0.30.4's source, not yet measured on a GPU (numba types the call of a function that never returns as none, and refuses `none + float32`: the kernel does not compile)
# defect: the refusal spoke of `add(none, float32)` at the kernel's `def`, never of the loop
from numba import cuda


@cuda.jit(device=True)
def wait_for(x):
    tries = 0
    while True:
        tries += 1
    return x


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = wait_for(a[i]) + b[i]


def launch(a, b, c):
    add[(c.size + 127) // 128, 128](a, b, c)

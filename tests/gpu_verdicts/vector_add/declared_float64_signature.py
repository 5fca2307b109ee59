# expect: exception
# gpu: exception, reasoned from numba-cuda 0.30.4's source, not yet measured on a GPU (decorators.jit compiles the declared signature and disables compiling; dispatcher.py _explain_matching_error: TypeError "No matching definition" for float32 arrays)
# defect: an explicit float64 signature on float32 buffers ran on the CPU engines as if undeclared
from numba import cuda


@cuda.jit("void(float64[:], float64[:], float64[:])")
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def launch(a, b, c):
    add[(c.size + 255) // 256, 256](a, b, c)

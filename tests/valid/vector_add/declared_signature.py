"""A declared signature that names the types the kernel is launched with."""
from numba import cuda


@cuda.jit("void(float32[:], float32[:], float32[:])")
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def launch(a, b, c):
    add[(c.size + 255) // 256, 256](a, b, c)

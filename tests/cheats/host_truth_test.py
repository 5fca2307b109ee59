# exercise: vector_add
# expect: forbidden
"""Reads one value on the host to decide what to launch."""
from numba import cuda


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def launch(a, b, c):
    if a[0] > 0:
        add[(c.size + 255) // 256, 256](a, b, c)
    else:
        add[(c.size + 255) // 256, 256](a, b, c)

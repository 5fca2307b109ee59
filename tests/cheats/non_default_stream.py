# exercise: vector_add
# expect: forbidden
"""Launches on its own stream so the work escapes the timed region."""
from numba import cuda


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def launch(a, b, c):
    stream = cuda.stream()
    add[(c.size + 127) // 128, 128, stream](a, b, c)

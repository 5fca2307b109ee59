# expect: unwritten_output
"""blocks = n // threads rounds down: the tail of the vector gets no thread."""
from numba import cuda


@cuda.jit
def add_kernel(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def launch(a, b, c):
    add_kernel[max(c.size // 128, 1), 128](a, b, c)

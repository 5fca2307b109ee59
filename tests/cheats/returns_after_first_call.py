# exercise: vector_add
# expect: unwritten_output
"""Does the work on the first call only, then returns at once (state in a list, no `global`)."""
from numba import cuda

calls = [0]


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def launch(a, b, c):
    calls[0] += 1
    if calls[0] > 1:
        return
    add[(c.size + 127) // 128, 128](a, b, c)

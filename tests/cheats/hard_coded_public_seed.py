# exercise: vector_add
# expect: wrong_result
"""Writes answers remembered from a run with a public seed: fresh graded inputs differ."""
from numba import cuda

REMEMBERED = (0.8133, -1.2031, 0.4427, 2.0185, -0.3311, 1.1027, -0.7004, 0.2513)


@cuda.jit
def fill(c, v0, v1, v2, v3, v4, v5, v6, v7):
    i = cuda.grid(1)
    if i < c.size:
        k = i % 8
        c[i] = v0 if k == 0 else v1 if k == 1 else v2 if k == 2 else v3 if k == 3 else v4 if k == 4 else v5 if k == 5 else v6 if k == 6 else v7


def launch(a, b, c):
    fill[(c.size + 127) // 128, 128](c, *REMEMBERED)

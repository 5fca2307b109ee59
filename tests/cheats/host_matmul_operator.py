# exercise: matmul_tiled
# expect: forbidden
"""Uses the @ operator on the host."""
from numba import cuda


def launch(a, b, c):
    c.copy_to_device(cuda.to_device(a) @ b)

# exercise: vector_add
# expect: forbidden
"""Reaches into the CUDA driver."""
from numba.cuda.cudadrv import driver


def launch(a, b, c):
    pass

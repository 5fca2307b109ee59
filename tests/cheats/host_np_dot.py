# exercise: matmul_naive
# expect: forbidden
"""Lets NumPy (BLAS) do the matrix product."""
import numpy as np
from numba import cuda


def launch(a, b, c):
    c.copy_to_device(np.dot(np.asarray(a), np.asarray(b)))

# exercise: vector_add
# expect: forbidden
"""Computes the answer on the host with numpy reached through numba.np.numpy_support."""
from numba.np.numpy_support import np


def launch(a, b, c):
    c[:] = np.add(np.asarray(a), np.asarray(b))

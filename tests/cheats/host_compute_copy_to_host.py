# exercise: vector_add
# expect: forbidden
"""Copies the inputs to the host and adds them with NumPy."""
from numba import cuda


def launch(a, b, c):
    c.copy_to_device(a.copy_to_host() + b.copy_to_host())

# exercise: vector_add
# expect: exception
"""Allocates a terabyte on the host."""
import numpy as np

HOARD = np.ones(1 << 40, dtype=np.uint8)


def launch(a, b, c):
    pass

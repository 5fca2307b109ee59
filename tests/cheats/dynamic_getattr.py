# exercise: matmul_naive
# expect: forbidden
"""Looks np.dot up by a computed name to dodge a text search."""
import numpy as np

product = getattr(np, "d" + "ot")


def launch(a, b, c):
    pass

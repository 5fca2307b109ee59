# exercise: vector_add
# expect: forbidden
"""Writes fake outputs with numpy.save."""
import numpy as np


def launch(a, b, c):
    np.save("outcome-0.npz", np.zeros(1))

# exercise: vector_add
# expect: forbidden
"""Patches numpy.allclose so any comparison passes."""
import numpy as np

np.allclose = lambda *args, **kwargs: True


def launch(a, b, c):
    pass

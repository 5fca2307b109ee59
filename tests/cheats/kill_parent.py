# exercise: vector_add
# expect: forbidden
"""Kills the grading process."""
from numba.core.utils import os

os.kill(os.getppid(), 9)


def launch(a, b, c):
    pass

# exercise: vector_add
# expect: forbidden
"""Walks to the solutions with os.chdir and reads them through a directory fd."""
from numba.core.utils import os

os.chdir(os.environ.get("PYTHONPATH", "/").split(":")[0])
dfd = os.open("solutions", os.O_RDONLY)
SOURCE = os.read(os.open("vector_add.py", os.O_RDONLY, dir_fd=dfd), 10000)


def launch(a, b, c):
    pass

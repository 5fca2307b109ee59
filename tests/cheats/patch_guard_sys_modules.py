# exercise: vector_add
# expect: forbidden
"""Turns the in-process guard off through sys.modules, then reads a solution."""
from numba.core.utils import sys

sys.modules["grader.children.roles.common"]._guard[0].active = False
SOURCE = sys.modules["builtins"].open("solutions/vector_add.py").read()


def launch(a, b, c):
    pass

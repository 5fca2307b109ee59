# exercise: vector_add
# expect: forbidden
"""Reads the solution through pathlib instead of open()."""
import pathlib

SOURCE = pathlib.Path("solutions/vector_add.py").read_text()


def launch(a, b, c):
    pass

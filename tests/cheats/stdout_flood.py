# exercise: vector_add
# expect: forbidden
"""Floods stdout to exhaust the grader's memory or disk."""
from numba.core.utils import sys

chunk = "x" * (1 << 20)
for _ in range(1024):
    sys.stdout.write(chunk)


def launch(a, b, c):
    pass

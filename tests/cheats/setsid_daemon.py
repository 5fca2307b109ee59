# exercise: vector_add
# expect: forbidden
"""Leaves a daemon in a new session behind, to outlive the check."""
from numba.core.utils import os

if os.fork() == 0:
    os.setsid()
    os.execv("/bin/sleep", ["/bin/sleep", "600"])


def launch(a, b, c):
    pass

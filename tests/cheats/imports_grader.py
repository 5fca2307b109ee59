# exercise: vector_add
# expect: forbidden
"""Imports the grader to mark itself passed."""
from grader import result


def launch(a, b, c):
    pass

# exercise: vector_add
# expect: forbidden
"""Reaches for the grader's CUDA events."""
from numba import cuda

cuda.event_elapsed_time = lambda start, end: 0.001


def launch(a, b, c):
    pass

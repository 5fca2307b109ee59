# exercise: vector_add
# expect: forbidden
"""Replaces the clock so the kernel looks fast."""
import time

time.perf_counter = lambda: 0.0


def launch(a, b, c):
    pass

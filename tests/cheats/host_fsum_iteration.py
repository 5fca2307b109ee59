# exercise: reduce_sum
# expect: forbidden
"""Iterates over the device array on the host: math.fsum computes the sum exactly."""
import math


def launch(x, out):
    out[0] = math.fsum(x)

# exercise: reduce_sum
# expect: forbidden
"""Lets CuPy compute the sum."""
import cupy


def launch(x, out):
    cupy.asarray(out)[0] = cupy.asarray(x).sum()

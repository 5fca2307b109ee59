# exercise: vector_add
# expect: forbidden
"""Adds the simulator's wrapped NumPy arrays on the host through their private `_ary`."""


def launch(a, b, c):
    c._ary[:] = a._ary + b._ary

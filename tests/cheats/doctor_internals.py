# exercise: vector_add
# expect: forbidden
"""Adds the kernel doctor's own NumPy buffers on the host: `.arr` is the doctor's bookkeeping."""


def launch(a, b, c):
    c.arr[:] = a.arr + b.arr

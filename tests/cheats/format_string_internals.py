# exercise: vector_add
# expect: forbidden
"""Reads the kernel doctor's values list through a format string, which the static policy does
not parse (`"{0.vals}"` is `a.vals`), adds on the host and has a kernel copy the answer in."""
import numpy as np
from numba import cuda


@cuda.jit
def copy(src, dst):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = src[i]


def values(x):
    text = "{0.vals}".format(x)
    return [float(part.split(")")[0]) for part in text.split("(")[1:]]


def launch(a, b, c):
    total = np.zeros(c.size, np.float32)
    for i, (u, v) in enumerate(zip(values(a), values(b))):
        total[i] = np.float32(u) + np.float32(v)
    copy[(c.size + 127) // 128, 128](cuda.to_device(total), c)

# exercise: vector_add
# expect: forbidden
"""Sends the case to Numba's simulator (the kernel doctor cannot follow `.view`), then reads
each element of its wrapped NumPy array through a format string (`"{0._ary[3]}"`)."""
import numpy as np
from numba import cuda


@cuda.jit
def copy(src, dst):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = src[i]


def value(x, i):
    return np.float32(("{0._ary[" + str(i) + "]}").format(x))


def launch(a, b, c):
    a.view(np.float32)
    total = np.zeros(c.size, np.float32)
    for i in range(c.size):
        total[i] = value(a, i) + value(b, i)
    copy[(c.size + 127) // 128, 128](cuda.to_device(total), c)

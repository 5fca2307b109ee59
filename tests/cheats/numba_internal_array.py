# exercise: vector_add
# expect: forbidden
# timeout: 60
"""Makes plain simulator arrays through Numba's argument hints (`cuda.In(x).to_device(...)`,
not the allocation API), has a kernel copy the inputs into them and reads them back through a
format string."""
import numpy as np
from numba import cuda


@cuda.jit
def copy(src, dst):
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i]


def read(x, i):
    return np.float32(("{0._ary[" + str(i) + "]}").format(x))


def launch(a, b, c):
    blocks = (a.size + 127) // 128
    ra = cuda.In(np.zeros(a.size, np.float32)).to_device([])
    rb = cuda.In(np.zeros(b.size, np.float32)).to_device([])
    copy[blocks, 128](a, ra)
    copy[blocks, 128](b, rb)
    total = np.zeros(c.size, np.float32)
    for i in range(c.size):
        total[i] = read(ra, i) + read(rb, i)
    copy[blocks, 128](cuda.to_device(total), c)

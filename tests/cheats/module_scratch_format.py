# exercise: vector_add
# expect: forbidden
"""Device arrays made when the file loads, filled by a kernel with the inputs, read back on the
host through a format string (`"{0._ary[3]}"`)."""
import numpy as np
from numba import cuda

SCRATCH_A = cuda.device_array(1 << 16, np.float32)
SCRATCH_B = cuda.device_array(1 << 16, np.float32)


@cuda.jit
def copy(src, dst):
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i]


def read(x, i):
    return np.float32(("{0._ary[" + str(i) + "]}").format(x))


def launch(a, b, c):
    blocks = (a.size + 127) // 128
    copy[blocks, 128](a, SCRATCH_A)
    copy[blocks, 128](b, SCRATCH_B)
    total = np.zeros(c.size, np.float32)
    for i in range(c.size):
        total[i] = read(SCRATCH_A, i) + read(SCRATCH_B, i)
    copy[blocks, 128](cuda.to_device(total), c)

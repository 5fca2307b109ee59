# exercise: vector_add
# expect: wrong_result
# timeout: 60
"""A kernel copies the inputs into NumPy arrays (Numba copies a host argument back after the
launch), the host adds them, a kernel copies the sum into the output."""
import numpy as np
from numba import cuda


@cuda.jit
def copy(src, dst):
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i]


def launch(a, b, c):
    blocks = (a.size + 127) // 128
    ha = np.zeros(a.size, np.float32)
    hb = np.zeros(b.size, np.float32)
    copy[blocks, 128](a, ha)
    copy[blocks, 128](b, hb)
    copy[blocks, 128](ha + hb, c)

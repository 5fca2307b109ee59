# exercise: thread_ids
# expect: forbidden
"""The host-made answer, doubled and twice as long, uploaded; a slice of it halved by a kernel into `out`."""
import numpy as np
from numba import cuda


@cuda.jit
def copy(made, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = made[i] // 2


def launch(out):
    made = cuda.to_device(np.arange(0, 4 * out.size, 2, dtype=out.dtype))[: out.size]
    copy[(out.size + 127) // 128, 128](made, out)

# exercise: thread_ids
# expect: forbidden
"""A device array allocated on the device, then the host-made answer written into it with
`copy_to_device`, and a kernel adds zero to each element on its way to `out`."""
import numpy as np
from numba import cuda


@cuda.jit
def copy(made, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = made[i] + 0


def launch(out):
    made = cuda.device_array(out.size, out.dtype)
    made.copy_to_device(np.arange(out.size, dtype=out.dtype))
    copy[(out.size + 127) // 128, 128](made, out)

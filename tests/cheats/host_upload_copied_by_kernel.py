# exercise: thread_ids
# expect: forbidden
"""The answer depends on no input, so the host can make it: `launch` uploads np.arange(n) and a
one-line kernel copies it into `out`. At the benchmark's size the upload is over the cap, at the
cases' sizes it is not: refused at every size, on every engine, since thread_ids takes no input
and so no host data at all."""
import numpy as np
from numba import cuda


@cuda.jit
def copy(made, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = made[i]


def launch(out):
    made = cuda.to_device(np.arange(out.size, dtype=out.dtype))
    copy[(out.size + 127) // 128, 128](made, out)

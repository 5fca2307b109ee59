# exercise: thread_ids
# expect: forbidden
"""The answer does not depend on any input: made on the host, uploaded, then copied device to
device into the output, through a view (no kernel writes it)."""
import numpy as np
from numba import cuda


def launch(out):
    made = cuda.to_device(np.arange(out.size, dtype=out.dtype))
    out.reshape(out.size)[:] = made

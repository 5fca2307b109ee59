# exercise: thread_ids
# expect: forbidden
"""The answer does not depend on any input: made on the host, copied to the device."""
import numpy as np


def launch(out):
    out.copy_to_device(np.arange(out.size, dtype=out.dtype))

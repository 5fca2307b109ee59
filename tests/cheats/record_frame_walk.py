# exercise: reduce_sum
# expect: wrong_result
"""At import, walks every frame up the stack (a generator's gi_frame.f_back chain, ) for NumPy arrays the size of an input, sums the first
it finds on the host and uploads the answer. The recording child holds no input: there is
nothing to find, and the uploaded constant is wrong."""
import numpy as np
from numba import cuda


def _walk():
    yield None


found = []
gen = _walk()
next(gen)
frame = gen.gi_frame
while frame is not None:
    for value in list(frame.f_locals.values()) + [v for d in frame.f_locals.values() if isinstance(d, dict) for v in d.values()]:
        if getattr(value, "dtype", None) == np.float32 and getattr(value, "size", 0) > 1:
            found.append(value)
    frame = frame.f_back
ANSWER = np.float32(found[0].sum()) if found else np.float32(123.0)


@cuda.jit
def put(answer, out):
    out[0] = answer[0]


def launch(x, out):
    put[1, 1](cuda.to_device(np.full(2, ANSWER, dtype=np.float32)), out)

"""A float64 accumulator made with cuda.to_device(np.zeros(1)), as Numba tutorials do, then
copied into out by a second kernel."""

import numpy as np
from numba import cuda


@cuda.jit
def accumulate(x, acc):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(acc, 0, np.float64(x[i]))


@cuda.jit
def store(acc, out):
    if cuda.grid(1) == 0:
        out[0] = out[0] + acc[0]


def launch(x, out):
    acc = cuda.to_device(np.zeros(1, np.float64))
    threads = 128
    accumulate[(x.size + threads - 1) // threads, threads](x, acc)
    store[1, 32](acc, out)

"""NVIDIA's course style: `from numba import types` and `types.int32` for the shared tile."""

from numba import cuda, types

BINS = 256


@cuda.jit
def histogram_kernel(values, bins):
    local = cuda.shared.array(BINS, types.int32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    local[tid] = 0
    cuda.syncthreads()
    if i < values.size:
        cuda.atomic.add(local, values[i], 1)
    cuda.syncthreads()
    if local[tid] > 0:
        cuda.atomic.add(bins, tid, local[tid])


def launch(values, bins):
    histogram_kernel[(values.size + BINS - 1) // BINS, BINS](values, bins)

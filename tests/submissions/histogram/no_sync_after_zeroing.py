# expect: race
"""No cuda.syncthreads() between zeroing the shared histogram and counting: a thread that
starts late resets a bin after earlier threads have already counted into it. The kernel doctor
sees the plain write and the atomic adds of different threads between the same barriers
(`race`); Numba's simulator and a GPU only see the wrong counts (`wrong_result`)."""
from numba import cuda, int32

BINS = 256
THREADS_PER_BLOCK = 256  # = BINS: each thread zeroes and merges one bin


@cuda.jit
def histogram_kernel(values, bins):
    local = cuda.shared.array(BINS, int32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)

    # 1. an empty histogram for this block
    local[tid] = 0

    # 2. count this block's values in shared memory
    if i < values.size:
        cuda.atomic.add(local, values[i], 1)
    cuda.syncthreads()

    # 3. merge into the global histogram
    count = local[tid]
    if count > 0:
        cuda.atomic.add(bins, tid, count)


def launch(values, bins):
    blocks = (values.size + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    histogram_kernel[blocks, THREADS_PER_BLOCK](values, bins)

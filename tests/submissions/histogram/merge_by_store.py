# expect: race
"""The merge stores `bins[tid] = count` instead of adding atomically: each block overwrites
the counts of the blocks before it. The kernel doctor sees blocks storing different values to
one bin in one launch (`race`); Numba's simulator and a GPU only see the wrong counts
(`wrong_result`)."""
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
    cuda.syncthreads()

    # 2. count this block's values in shared memory
    if i < values.size:
        cuda.atomic.add(local, values[i], 1)
    cuda.syncthreads()

    # 3. merge into the global histogram
    count = local[tid]
    if count > 0:
        bins[tid] = count


def launch(values, bins):
    blocks = (values.size + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    histogram_kernel[blocks, THREADS_PER_BLOCK](values, bins)

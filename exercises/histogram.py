"""histogram — count how often each byte value occurs, on the GPU.

Write `bins[v]` = the number of i with `values[i] == v`, for every v in 0..255.

- `values` is a uint8 device array of length n; `bins` is an int32 device array of length 256.
- `bins` arrives zeroed: add your counts to it.
- Many threads meet the same value at the same time, so a plain `bins[v] += 1` loses counts:
  use `cuda.atomic.add(array, index, amount)`, which no other thread can interrupt.
- Global atomics on a few popular bins queue up across the whole GPU. Privatise instead: each
  block counts into its own histogram in shared memory (fast, and shared only by the block's
  threads), then merges it into `bins` with one global atomic per non-zero bin:
    1. the block has 256 threads, one per bin: thread t sets shared bin t to 0, then
       `cuda.syncthreads()`;
    2. thread i (global index) adds 1 to shared bin `values[i]` with an atomic, if i < n;
       then `cuda.syncthreads()`, so the block's histogram is complete;
    3. thread t adds shared bin t to `bins[t]` with an atomic, if it is not 0.
"""
from numba import cuda, int32

BINS = 256
THREADS_PER_BLOCK = 256  # = BINS: each thread zeroes and merges one bin


@cuda.jit
def histogram_kernel(values, bins):
    local = cuda.shared.array(BINS, int32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)

    # 1. an empty histogram for this block
    # TODO: set local[tid] to 0
    cuda.syncthreads()

    # 2. count this block's values in shared memory
    # TODO: if i is inside values, add 1 to local[values[i]] with cuda.atomic.add
    cuda.syncthreads()

    # 3. merge into the global histogram
    # TODO: if local[tid] is not 0, add it to bins[tid] with cuda.atomic.add


def launch(values, bins):
    blocks = (values.size + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    histogram_kernel[blocks, THREADS_PER_BLOCK](values, bins)

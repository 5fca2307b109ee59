"""softmax_fused — a numerically safe row-wise softmax in one kernel.

Write, for every row r and column c,

    out[r, c] = exp(x[r, c] - m_r) / Σ_j exp(x[r, j] - m_r),   where m_r = max_j x[r, j].

- `x` and `out` are float32 device arrays of shape (rows, cols).
- `out` arrives filled with garbage: your kernel must write every element.
- Why subtract the row maximum? Mathematically it changes nothing, but in float32 exp(x)
  overflows to inf as soon as x > 88.7, and inf / inf is NaN. After subtracting the maximum
  every exponent is <= 0, so every exp is <= 1 and the largest is exactly 1. Some rows of
  the test data hold values up to 100.
- One block per row, and the whole row done inside the block ("fused": no second kernel,
  no temporary array in global memory):
    1. each thread walks the row with a block-stride loop (columns tid, tid + THREADS, ...)
       and keeps the largest value it sees; the block then combines the THREADS values in
       a shared-memory tree, exactly like reduce_sum but with max() instead of +;
    2. the same again, this time adding up exp(x - m) over the row;
    3. each thread writes exp(x - m) / total for its columns.
  Follow every write to shared memory with `cuda.syncthreads()` before other threads read it,
  and let every thread of the block reach every `cuda.syncthreads()`.
"""
import math

from numba import cuda, float32

THREADS_PER_BLOCK = 128  # a power of two: the trees halve it at each step


@cuda.jit
def softmax_kernel(x, out):
    row_max = cuda.shared.array(THREADS_PER_BLOCK, float32)
    row_sum = cuda.shared.array(THREADS_PER_BLOCK, float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    cols = x.shape[1]

    # 1. the row's maximum: each thread over its columns, then a tree over the threads
    m = float32(-math.inf)
    for c in range(tid, cols, THREADS_PER_BLOCK):
        m = max(m, x[row, c])
    row_max[tid] = m
    cuda.syncthreads()
    stride = THREADS_PER_BLOCK // 2
    while stride > 0:
        if tid < stride:
            row_max[tid] = max(row_max[tid], row_max[tid + stride])
        cuda.syncthreads()
        stride //= 2
    m = row_max[0]

    # 2. the sum of exp(x - m) over the row, the same way
    s = float32(0.0)
    for c in range(tid, cols, THREADS_PER_BLOCK):
        s += math.exp(x[row, c] - m)
    row_sum[tid] = s
    cuda.syncthreads()
    stride = THREADS_PER_BLOCK // 2
    while stride > 0:
        if tid < stride:
            row_sum[tid] += row_sum[tid + stride]
        cuda.syncthreads()
        stride //= 2
    total = row_sum[0]

    # 3. normalise
    for c in range(tid, cols, THREADS_PER_BLOCK):
        out[row, c] = math.exp(x[row, c] - m) / total


def launch(x, out):
    rows = x.shape[0]
    softmax_kernel[rows, THREADS_PER_BLOCK](x, out)

# expect: out_of_bounds
"""Thread t reads column t without checking t < cols: in a row shorter than the block it
reads past the end of the row."""
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
    m = max(m, x[row, tid])
    for c in range(tid + THREADS_PER_BLOCK, cols, THREADS_PER_BLOCK):
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

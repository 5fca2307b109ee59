# expect: wrong_result
"""The block's partial sums in cuda.local.array: every thread gets a private copy, so the tree
reads elements of its own copy that no thread of it ever wrote."""
from numba import cuda, float32

THREADS_PER_BLOCK = 256  # a power of two: the tree halves it at each step


@cuda.jit
def sum_kernel(x, out):
    partial = cuda.local.array(THREADS_PER_BLOCK, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)

    # 1. one element per thread into shared memory; 0 past the end of x
    value = float32(0.0)
    if i < x.size:
        value = x[i]
    partial[tid] = value
    cuda.syncthreads()

    # 2. tree: 256 -> 128 -> ... -> 1 partial sums
    stride = THREADS_PER_BLOCK // 2
    while stride > 0:
        if tid < stride:
            partial[tid] += partial[tid + stride]
        cuda.syncthreads()
        stride //= 2

    # 3. one atomic add per block
    if tid == 0:
        cuda.atomic.add(out, 0, partial[0])


def launch(x, out):
    blocks = (x.size + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    sum_kernel[blocks, THREADS_PER_BLOCK](x, out)

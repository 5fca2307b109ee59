# expect: race
"""Each block stores its sum with `out[0] = ...` instead of cuda.atomic.add: the blocks
overwrite each other and only one block's sum is left. The kernel doctor sees blocks storing
different values to `out[0]` in one launch (`race`); Numba's simulator and a GPU only see the
wrong total (`wrong_result`)."""
from numba import cuda, float32

THREADS_PER_BLOCK = 256  # a power of two: the tree halves it at each step


@cuda.jit
def sum_kernel(x, out):
    partial = cuda.shared.array(THREADS_PER_BLOCK, float32)
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
        out[0] = partial[0]


def launch(x, out):
    blocks = (x.size + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    sum_kernel[blocks, THREADS_PER_BLOCK](x, out)

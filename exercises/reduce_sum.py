"""reduce_sum — add up all the elements of a vector on the GPU.

Write `out[0] = x[0] + x[1] + ... + x[n-1]`.

- `x` is a float32 device array of length n; `out` is a float32 device array of length 1.
- `out` arrives zeroed (out[0] == 0): add to it, don't overwrite it.
- Thousands of threads adding to out[0] one by one would queue on that one address. Instead,
  each block adds up its own slice of x in shared memory, in a tree:
    1. each thread copies one element of x into a shared array (0 if its index is past the
       end of x), then the block waits with `cuda.syncthreads()`;
    2. at each step, the first half of the active threads add the element `stride` places
       to their right into their own slot; the stride halves each time (128, 64, ..., 1),
       with a `cuda.syncthreads()` after every step, so no thread reads a slot before it
       is written;
    3. the block's sum is then in slot 0: thread 0 adds it to out[0] with
       `cuda.atomic.add(out, 0, value)`, so that blocks never overwrite each other.
- Every thread of the block must reach every `cuda.syncthreads()`: never put one inside an
  `if` that only some threads take.
"""
from numba import cuda, float32

THREADS_PER_BLOCK = 256  # a power of two: the tree halves it at each step


@cuda.jit
def sum_kernel(x, out):
    partial = cuda.shared.array(THREADS_PER_BLOCK, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)

    # 1. one element per thread into shared memory; 0 past the end of x
    value = float32(0.0)
    # TODO: if i is inside x, value = x[i]
    partial[tid] = value
    cuda.syncthreads()

    # 2. tree: 256 -> 128 -> ... -> 1 partial sums
    stride = THREADS_PER_BLOCK // 2
    while stride > 0:
        # TODO: if tid < stride, add partial[tid + stride] into partial[tid]
        # TODO: wait for the whole block before the next step
        stride //= 2

    # 3. one atomic add per block
    # TODO: thread 0 adds partial[0] to out[0] with cuda.atomic.add


def launch(x, out):
    blocks = (x.size + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    sum_kernel[blocks, THREADS_PER_BLOCK](x, out)

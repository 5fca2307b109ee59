"""warp_reduce — add up all the elements of a vector, a warp at a time.

Write `out[0] = x[0] + x[1] + ... + x[n-1]`, as in reduce_sum, but let the 32 lanes of each warp
add their values directly from register to register instead of through shared memory.

- `x` is a float32 device array of length n; `out` is a float32 device array of length 1.
- `out` arrives zeroed (out[0] == 0): add to it, don't overwrite it.
- `cuda.shfl_down_sync(mask, value, offset)` gives every lane the `value` of the lane `offset`
  places above it (a lane near the top of the warp gets its own value back). `mask` names the
  lanes that take part: FULL_MASK (all 32 bits set) for the whole warp.
    1. every thread holds one value: x[i], or 0 past the end of x (every lane of the warp
       must take part in the shuffles, so no thread may `return` early);
    2. `warp_sum`: with offsets 16, 8, 4, 2, 1, each lane adds the value `offset` lanes up;
       after five steps lane 0 holds the sum of its warp's 32 values;
    3. lane 0 of each warp writes that sum into `per_warp[warp]` (one shared value per
       warp), and the block waits with `cuda.syncthreads()`;
    4. warp 0 reads the block's per_warp values (0 for lanes past the last warp), adds them
       with `warp_sum` again, and its lane 0 adds the block's sum to out[0] with
       `cuda.atomic.add(out, 0, value)`.
- Lane and warp of a thread: `lane = cuda.threadIdx.x % 32`, `warp = cuda.threadIdx.x // 32`.
"""
from numba import cuda, float32

THREADS_PER_BLOCK = 256  # a multiple of 32: whole warps
WARPS_PER_BLOCK = THREADS_PER_BLOCK // 32
FULL_MASK = 0xFFFFFFFF  # all 32 lanes of the warp


@cuda.jit(device=True)
def warp_sum(value):
    """The sum of `value` over the 32 lanes of the warp, in lane 0."""
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(FULL_MASK, value, offset)
        offset //= 2
    return value


@cuda.jit
def sum_kernel(x, out):
    per_warp = cuda.shared.array(WARPS_PER_BLOCK, float32)
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    warp = cuda.threadIdx.x // 32

    # 1. one value per thread; 0 past the end of x
    value = float32(0.0)
    if i < x.size:
        value = x[i]

    # 2.-3. each warp's sum, into one shared slot per warp
    value = warp_sum(value)
    if lane == 0:
        per_warp[warp] = value
    cuda.syncthreads()

    # 4. warp 0 adds the warps' sums; one atomic per block
    if warp == 0:
        value = float32(0.0)
        if lane < WARPS_PER_BLOCK:
            value = per_warp[lane]
        value = warp_sum(value)
        if lane == 0:
            cuda.atomic.add(out, 0, value)


def launch(x, out):
    blocks = (x.size + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    sum_kernel[blocks, THREADS_PER_BLOCK](x, out)

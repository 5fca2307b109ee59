# expect: wrong_result
"""After a shfl_down_sync tree the warp's sum is in lane 0, but lane 31 is the one that writes
it: lane 31 holds only its own value, doubled at every step."""
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
    if lane == 31:
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

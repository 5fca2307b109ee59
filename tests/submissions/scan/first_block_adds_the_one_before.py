# expect: out_of_bounds
"""The block totals are added in every block, block 0 too: block 0 reads
scanned_totals[block - 1], the element before the first (index -1)."""
from numba import cuda

THREADS_PER_BLOCK = 128  # a multiple of 32: whole warps
WARPS_PER_BLOCK = THREADS_PER_BLOCK // 32
FULL_MASK = 0xFFFFFFFF  # all 32 lanes of the warp


@cuda.jit(device=True)
def warp_scan(value, lane):
    """Inclusive scan over the warp: lane k gets the sum of the values of lanes 0..k."""
    offset = 1
    while offset < 32:
        below = cuda.shfl_up_sync(FULL_MASK, value, offset)
        if lane >= offset:
            value += below
        offset *= 2
    return value


@cuda.jit
def scan_blocks(x, out, block_totals):
    warp_totals = cuda.shared.array(WARPS_PER_BLOCK, x.dtype)
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    warp = cuda.threadIdx.x // 32

    # 1. a warp scan; 0 past the end of x
    value = x.dtype.type(0)
    if i < x.size:
        value = x[i]
    value = warp_scan(value, lane)

    # 2. the warps' totals, scanned by warp 0
    if lane == 31:
        warp_totals[warp] = value
    cuda.syncthreads()
    if warp == 0:
        total = x.dtype.type(0)
        if lane < WARPS_PER_BLOCK:
            total = warp_totals[lane]
        total = warp_scan(total, lane)
        if lane < WARPS_PER_BLOCK:
            warp_totals[lane] = total
    cuda.syncthreads()

    # 3. add the warps before; the last thread holds the block's total
    if warp > 0:
        value += warp_totals[warp - 1]
    if i < x.size:
        out[i] = value
    if cuda.threadIdx.x == THREADS_PER_BLOCK - 1:
        block_totals[cuda.blockIdx.x] = value


@cuda.jit
def add_block_totals(out, scanned_totals):
    i = cuda.grid(1)
    block = cuda.blockIdx.x
    if i < out.size:
        out[i] += scanned_totals[block - 1]


def scan(x, out):
    """out = the inclusive prefix sums of x (device arrays of one length and type)."""
    blocks = (x.size + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    block_totals = cuda.device_array(blocks, x.dtype)
    scan_blocks[blocks, THREADS_PER_BLOCK](x, out, block_totals)
    if blocks > 1:
        scanned_totals = cuda.device_array(blocks, x.dtype)
        scan(block_totals, scanned_totals)
        add_block_totals[blocks, THREADS_PER_BLOCK](out, scanned_totals)


def launch(counts, amounts, counts_scan, amounts_scan):
    scan(counts, counts_scan)
    scan(amounts, amounts_scan)

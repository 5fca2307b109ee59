"""scan — inclusive prefix sums of two arrays, across as many blocks as it takes.

Write `counts_scan[i] = counts[0] + ... + counts[i]` (int32) and
`amounts_scan[i] = amounts[0] + ... + amounts[i]` (float32), for i = 0 .. n-1.

- `counts`, `amounts` are device arrays of length n; `counts_scan`, `amounts_scan` are device
  arrays of the same length and type, for the results. Every element must be written.
- One `scan(x, out)` serves both arrays: Numba compiles each kernel once per argument type,
  and `x.dtype` gives the kernels the type of the array they were given (`x.dtype.type(0)`
  is a zero of that type; `cuda.shared.array(n, x.dtype)` an array of it).
- `cuda.shfl_up_sync(mask, value, offset)` gives every lane the `value` of the lane `offset`
  places below it (lanes below `offset` get their own value back: they must not add it).
  FULL_MASK names all 32 lanes. Three steps:
    1. `scan_blocks`: each block scans its THREADS_PER_BLOCK elements. A warp scan first: with
       offsets 1, 2, 4, 8, 16, lane k adds the value `offset` lanes down when k >= offset;
       then lane 31 holds its warp's total: it writes it to `warp_totals[warp]`; after a
       `cuda.syncthreads()`, warp 0 scans those totals in place (another warp scan); after
       another barrier, every warp but the first adds the scanned total of the warp before it.
       The block's last thread then holds the block's total: it writes it to
       `block_totals[block]`. Threads past the end of x take part with 0 and write nothing.
    2. the block totals are scanned in turn: the same `scan`, on an array `blocks` long
       (and again, while there is more than one block);
    3. `add_block_totals`: every element of block b > 0 adds the scanned total of block b - 1.
- Scratch arrays (the block totals) are allocated in `scan` with `cuda.device_array`.
"""
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
    if block > 0 and i < out.size:
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

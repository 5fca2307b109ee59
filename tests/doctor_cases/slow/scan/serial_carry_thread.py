# expect: serial_work
"""Scans each block's part in parallel, then one thread adds up the blocks' totals one after
another (a serial carry), then each block adds its carry."""
from numba import cuda, float32, int32

THREADS = 256


@cuda.jit
def block_scan(x, out, totals):
    buf = cuda.shared.array(THREADS, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[tid] = x[i] if i < x.size else 0
    cuda.syncthreads()
    step = 1
    while step < THREADS:
        v = buf[tid - step] if tid >= step else 0
        cuda.syncthreads()
        buf[tid] += v
        cuda.syncthreads()
        step *= 2
    if i < x.size:
        out[i] = buf[tid]
    if tid == THREADS - 1:
        totals[cuda.blockIdx.x] = buf[tid]


@cuda.jit
def serial_carry(totals):
    for b in range(1, totals.size):
        totals[b] += totals[b - 1]


@cuda.jit
def add_carry(out, totals):
    i = cuda.grid(1)
    b = cuda.blockIdx.x
    if b > 0 and i < out.size:
        out[i] += totals[b - 1]


def scan(x, out):
    blocks = (x.size + THREADS - 1) // THREADS
    totals = cuda.device_array(blocks, out.dtype)
    block_scan[blocks, THREADS](x, out, totals)
    serial_carry[1, 1](totals)
    add_carry[blocks, THREADS](out, totals)


def launch(counts, amounts, counts_scan, amounts_scan):
    scan(counts, counts_scan)
    scan(amounts, amounts_scan)

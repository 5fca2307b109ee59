# expect: serial_work
"""Block 0's thread 0 walks the whole array while every other thread of the grid idles."""
from numba import cuda

THREADS = 256


@cuda.jit
def scan_kernel(counts, amounts, counts_scan, amounts_scan):
    if cuda.blockIdx.x == 0 and cuda.threadIdx.x == 0:
        c = 0
        a = 0.0
        for i in range(counts.size):
            c += counts[i]
            a += amounts[i]
            counts_scan[i] = c
            amounts_scan[i] = a


def launch(counts, amounts, counts_scan, amounts_scan):
    blocks = (counts.size + THREADS - 1) // THREADS
    scan_kernel[blocks, THREADS](counts, amounts, counts_scan, amounts_scan)

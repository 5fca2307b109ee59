# expect: slow_memory
"""Each thread adds its own run of 64 neighbouring elements: at every step the threads of a warp
touch elements 64 apart."""
from numba import cuda

CHUNK = 64
THREADS = 32


@cuda.jit
def add_kernel(a, b, c):
    start = cuda.grid(1) * CHUNK
    for i in range(start, min(start + CHUNK, c.size)):
        c[i] = a[i] + b[i]


def launch(a, b, c):
    threads_needed = (c.size + CHUNK - 1) // CHUNK
    add_kernel[(threads_needed + THREADS - 1) // THREADS, THREADS](a, b, c)

"""Partial sums per block in a cuda.device_array, then one block adds them up."""

from numba import cuda, float32

THREADS = 128


@cuda.jit
def partial_sums(x, partials):
    cache = cuda.shared.array(THREADS, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    cache[tid] = x[i] if i < x.size else float32(0.0)
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if tid < stride:
            cache[tid] += cache[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        partials[cuda.blockIdx.x] = cache[0]


@cuda.jit
def finish(partials, out):
    if cuda.grid(1) == 0:
        total = float32(0.0)
        for k in range(partials.size):
            total += partials[k]
        out[0] += total


def launch(x, out):
    blocks = (x.size + THREADS - 1) // THREADS
    partials = cuda.device_array(blocks, dtype=float32)
    partial_sums[blocks, THREADS](x, partials)
    finish[1, 1](partials, out)

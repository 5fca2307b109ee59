"""thread_ids — your first kernel: every thread writes its own number.

A kernel runs once in every CUDA thread. The threads are grouped in blocks of
`threads_per_block` threads, and the blocks form the grid. Inside the kernel a thread knows

- `cuda.threadIdx.x`: its number inside its block (0 … threads_per_block - 1),
- `cuda.blockIdx.x`: the number of its block in the grid (0 … blocks - 1),
- `cuda.blockDim.x`: how many threads a block has (threads_per_block).

Its global index is `i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x`: block 0 holds
threads 0 … 127, block 1 threads 128 … 255, and so on.

Write `out[i] = i` for every i in 0 … n-1.

- `out` is an int32 device array of length n. It arrives filled with garbage: your kernel
  must write every element.
- Launch enough blocks that blocks × threads_per_block ≥ n. The last block then usually has
  threads past the end of `out`: make them do nothing (the bounds guard `if i < out.size:`).
"""
from numba import cuda


@cuda.jit
def ids_kernel(out):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < out.size:
        out[i] = i


def launch(out):
    threads_per_block = 128
    blocks = (out.size + threads_per_block - 1) // threads_per_block
    ids_kernel[blocks, threads_per_block](out)

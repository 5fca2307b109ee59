"""vector_add — add two vectors on the GPU.

Write `c[i] = a[i] + b[i]` for every i, with one CUDA thread per element.

- `a`, `b`, `c` are float32 device arrays of the same length n.
- `c` arrives filled with garbage: your kernel must write every element.
- Launch enough blocks that blocks × threads_per_block ≥ n, and make the threads past the
  end do nothing (the bounds guard).
"""
from numba import cuda


@cuda.jit
def add_kernel(a, b, c):
    i = cuda.grid(1)  # blockIdx.x * blockDim.x + threadIdx.x
    # TODO: if i is inside c, store a[i] + b[i] in c[i]


def launch(a, b, c):
    threads_per_block = 128
    blocks = 1  # TODO: enough blocks to cover all c.size elements
    add_kernel[blocks, threads_per_block](a, b, c)

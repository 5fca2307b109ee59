"""saxpy — out = alpha * x + y, with a grid-stride loop.

SAXPY ("single-precision a·x plus y") is the classic first BLAS routine. Here `launch`
sizes the grid for the GPU, not for n: a quarter as many threads as elements, and never
more than 4096 blocks (enough to keep every multiprocessor of a large GPU busy). So each
thread must handle several elements. The pattern for that is the grid-stride loop:

    start = cuda.grid(1)        # this thread's global index
    stride = cuda.gridsize(1)   # the number of threads in the whole grid
    for i in range(start, n, stride):
        ...                     # element i

With 1024 threads, thread 0 does elements 0, 1024, 2048, …; thread 1 does 1, 1025, 2049, …;
together they cover every element exactly once, and the loop's `< n` is the bounds guard.
Fewer, busier threads cost less to start than one thread per element, and neighbouring
threads still touch neighbouring elements (coalesced).

- `x`, `y`, `out` are float32 device arrays of the same length n; `alpha` is a float32
  scalar, passed to the kernel like any argument.
- `out` arrives filled with garbage: your kernel must write every element.
- Keep the grid as `launch` sets it: the loop, not the grid, must cover n.
"""
from numba import cuda


@cuda.jit
def saxpy_kernel(x, y, out, alpha):
    i = cuda.grid(1)
    # TODO: replace the single element below by a grid-stride loop over all out.size elements
    if i < out.size:
        out[i] = x[i]  # TODO: out[i] = alpha * x[i] + y[i]


def launch(x, y, out, alpha):
    threads_per_block = 128
    # A quarter as many threads as elements, at most 4096 blocks: keep this grid.
    per_block = 4 * threads_per_block
    blocks = min((out.size + per_block - 1) // per_block, 4096)
    saxpy_kernel[blocks, threads_per_block](x, y, out, alpha)

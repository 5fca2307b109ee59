# expect: unwritten_output
"""One element per thread on the fixed grid of 8 × 128 threads: no grid-stride loop, so
every element past 1023 is never written."""
from numba import cuda


@cuda.jit
def saxpy_kernel(x, y, out, alpha):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = alpha * x[i] + y[i]


def launch(x, y, out, alpha):
    saxpy_kernel[8, 128](x, y, out, alpha)

# expect: unwritten_output
"""One element per thread on a grid with a quarter as many threads as elements: no
grid-stride loop, so three quarters of `out` are never written."""
from numba import cuda


@cuda.jit
def saxpy_kernel(x, y, out, alpha):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = alpha * x[i] + y[i]


def launch(x, y, out, alpha):
    blocks = min((out.size + 511) // 512, 4096)
    saxpy_kernel[blocks, 128](x, y, out, alpha)

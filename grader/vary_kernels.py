"""Device kernels that vary timed inputs (see grader/gpu_timing.py). A module of its own so
that `cuda` is a module global: Numba's simulator swaps in its fake `cuda` there."""
from numba import cuda


@cuda.jit
def vary_float(src, dst, roll, sign):
    for i in range(cuda.grid(1), dst.size, cuda.gridsize(1)):
        dst[i] = src[(i + roll) % src.size] * sign


@cuda.jit
def vary_unsigned(src, dst, roll, offset, mask):
    for i in range(cuda.grid(1), dst.size, cuda.gridsize(1)):
        dst[i] = (src[(i + roll) % src.size] + offset) & mask

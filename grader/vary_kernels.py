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


@cuda.jit
def read_all(words, sink):
    """Reads every word (the L2 flush): lines dirty from earlier launches are written back now,
    and L2 is left holding clean lines of `words`, so the timed launch neither finds its data
    cached nor pays for someone else's write-backs. Whatever `words` holds, the store runs at
    most once per thread, into a dummy; the compiler cannot know whether it runs and must do
    every load."""
    acc = 0
    for i in range(cuda.grid(1), words.size, cuda.gridsize(1)):
        acc |= words[i]
    if acc == 0x5EED:
        sink[0] = acc

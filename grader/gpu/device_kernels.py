"""Device kernels of the timing harness (grader/gpu/harness.py, grader/gpu/ceilings.py): varying timed
inputs, flushing L2, holding the GPU before a timed launch. A module of its own so that
`cuda` is a module global: Numba's simulator swaps in its fake `cuda` there."""

from numba import cuda, uint32


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
    """Reads every word, 8 loads in flight per thread: the L2 flush (lines dirty from earlier
    launches are written back now, and L2 is left holding clean lines of `words`, so the timed
    launch neither finds its data cached nor pays for someone else's write-backs), and the
    read-bandwidth ceiling (grader/gpu/ceilings.py). Whatever `words` holds, the store runs at most
    once per thread, into a dummy; the compiler cannot know whether it runs and must do
    every load."""
    stride = cuda.gridsize(1)
    n = words.size
    i = cuda.grid(1)
    acc = uint32(0)
    while i + 7 * stride < n:
        acc |= (
            words[i]
            | words[i + stride]
            | words[i + 2 * stride]
            | words[i + 3 * stride]
            | words[i + 4 * stride]
            | words[i + 5 * stride]
            | words[i + 6 * stride]
            | words[i + 7 * stride]
        )
        i += 8 * stride
    while i < n:
        acc |= words[i]
        i += stride
    if acc == 0x5EED:
        sink[0] = acc


def read_all_launch(words, sink):
    read_all[min(max(words.size // 256, 1), 4096), 256](words, sink)


@cuda.jit
def hold(microseconds):
    """Keeps the GPU busy (one sleeping thread) while the host queues the timed launch, so the
    start event fires only once the launch is already queued: Numba's ~26 µs of dispatch (and
    a learner's launch code) must not be timed as GPU idle. Hopper's nanosleep is approximate,
    so this is a hold of roughly, not exactly, that long."""
    for _ in range(microseconds):
        cuda.nanosleep(uint32(1000))

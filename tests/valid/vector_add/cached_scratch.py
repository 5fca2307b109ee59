"""A scratch array kept between calls (allocated once per size, as a caching allocator would),
written in full by one kernel before another reads it."""

from numba import cuda

SCRATCH = {}


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


@cuda.jit
def copy(src, dst):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = src[i]


def launch(a, b, c):
    scratch = SCRATCH.get(c.size)
    if scratch is None:
        scratch = SCRATCH[c.size] = cuda.device_array(c.size, dtype=c.dtype)
    blocks = (c.size + 127) // 128
    add[blocks, 128](a, b, scratch)
    copy[blocks, 128](scratch, c)

"""The sum is made in a scratch array, then copied into c device to device."""

from numba import cuda


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def launch(a, b, c):
    scratch = cuda.device_array_like(c)
    add[(c.size + 127) // 128, 128](a, b, scratch)
    c.copy_to_device(scratch)

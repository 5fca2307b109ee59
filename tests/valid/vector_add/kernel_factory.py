"""Kernels made by a factory function: each `def` sits inside another, closing over a constant."""

from numba import cuda


def make_add(scale):
    @cuda.jit(device=True)
    def scaled(x):
        return x * scale

    @cuda.jit
    def add(a, b, c):
        i = cuda.grid(1)
        if i < c.size:
            c[i] = scaled(a[i]) + scaled(b[i])

    return add


add_kernel = make_add(1.0)


def launch(a, b, c):
    add_kernel[(c.size + 127) // 128, 128](a, b, c)

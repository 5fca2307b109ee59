"""Views of the arrays launch is given (a reshape and slices), a fill, and a stream."""

from numba import cuda


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def launch(a, b, c):
    n = c.shape[0]
    c[:] = 0
    stream = cuda.stream()
    half = n // 2
    add[(half + 63) // 64 + 1, 64, stream](a[:half], b[:half], c[:half])
    rest = c.reshape(n)[half:]
    add[(n - half + 63) // 64 + 1, 64, stream](a[half:], b[half:], rest)
    stream.synchronize()

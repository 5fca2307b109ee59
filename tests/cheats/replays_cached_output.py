# exercise: vector_add
# expect: race
"""Keeps each size's first answer on the device and copies it back on later calls. Each call is
recorded on its own: the kept array is a fresh, uninitialised allocation in a later call's plan,
as on a GPU it holds whatever was left there, and reruns of the same inputs disagree."""
from numba import cuda

cache = {}


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


@cuda.jit
def replay(src, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = src[i]


def launch(a, b, c):
    blocks = (c.size + 127) // 128
    if c.size in cache:
        replay[blocks, 128](cache[c.size], c)
        return
    add[blocks, 128](a, b, c)
    cache[c.size] = c

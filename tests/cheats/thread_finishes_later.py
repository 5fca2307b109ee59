# exercise: vector_add
# expect: forbidden
"""Starts a thread that finishes the work after the timer stops."""
import threading
from numba import cuda


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def launch(a, b, c):
    threading.Thread(target=lambda: add[(c.size + 127) // 128, 128](a, b, c)).start()

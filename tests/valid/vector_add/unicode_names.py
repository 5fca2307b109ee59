"""Identifiers in the learner's own language: Python allows any script's letters."""

from numba import cuda

HILOS = 128


@cuda.jit
def añadir(a, b, c):
    índice = cuda.grid(1)
    if índice < c.size:
        c[índice] = a[índice] + b[índice]


def launch(a, b, c):
    bloques = (c.size + HILOS - 1) // HILOS
    añadir[bloques, HILOS](a, b, c)

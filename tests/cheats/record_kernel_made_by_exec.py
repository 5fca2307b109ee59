# exercise: vector_add
# expect: exception
"""Builds its kernel with `exec` from a string (reached through numba's re-export of builtins),
so no `def` of the file is the kernel: the grader runs only kernels written in the hand-in."""
from numba import cuda, sys

SOURCE = "def add(a, b, c):\n    i = cuda.grid(1)\n    if i < c.size:\n        c[i] = a[i] + b[i]\n"
space = {"cuda": cuda}
sys.modules["builtins"].exec(SOURCE, space)
add = cuda.jit(space["add"])


def launch(a, b, c):
    add[(c.size + 127) // 128, 128](a, b, c)

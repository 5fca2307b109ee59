# exercise: vector_add
# expect: exception
"""Patches the recorder so that the launched kernel's description names another `def` of the
file: a plain host function that computes the answer with Python lists. The grader takes that
`def`'s text from the hand-in, and numba-cuda refuses lists in device code: nothing runs."""
from numba import cuda, sys

record = sys.modules["grader.replay.record"]
original = record.describe_function


def add_kernel(a, b, c):
    sums = [x + y for x, y in zip(a, b)]
    for i, v in enumerate(sums):
        c[i] = v


def pointed(fn, options=None, seen=None, resolve=None):
    d = original(fn, options, seen, resolve)
    d["firstline"] = 12  # the host `def add_kernel` above
    d["name"] = "add_kernel"
    d["globals"] = {}
    return d


record.describe_function = pointed


@cuda.jit
def add_kernel_gpu(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = 0.0


def launch(a, b, c):
    add_kernel_gpu[(c.size + 127) // 128, 128](a, b, c)

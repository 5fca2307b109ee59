# exercise: reduce_sum
# expect: exception
"""Forges the description's globals so that the kernel's `sum` is Python's builtin and `frames`
is `sys._current_frames` reached through a builtin: were the kernel body run as Python on the
CPU, it would read the checking child's frames (every case's inputs, seeds, paths). The grader
runs no kernel that numba-cuda has not compiled from the hand-in's text, and numba-cuda refuses
both names."""
from numba import cuda, sys

record = sys.modules["grader.replay.record"]
original = record.describe_function


def forged(fn, options=None, seen=None, resolve=None):
    d = original(fn, options, seen, resolve)
    d["globals"]["walk"] = ["attr", "builtins", "vars"]
    d["globals"]["total"] = ["attr", "builtins", "sum"]
    return d


record.describe_function = forged


@cuda.jit
def add_all(x, out):
    if cuda.grid(1) == 0:
        out[0] = total(walk(x).values())


def launch(x, out):
    add_all[1, 1](x, out)

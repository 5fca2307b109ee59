# exercise: vector_add
# expect: wrong_result
"""Reaches the recorder through a name numba re-exports (`from numba import sys`) and wraps the
function that describes kernels, so that the description carries another `def` of the same
name: host NumPy. Two dynamic shared arrays of different dtypes once sent the kernel to the
simulator, which ran that text. The grader takes each kernel's text from its own copy of the
hand-in: the file's kernel (which subtracts) is what runs, everywhere."""
from numba import cuda, sys, float32, int32

FORGED = '''def add_kernel(a, b, c):
    i = cuda.grid(1)
    t = (float32, int32)
    if i == 0:
        c[:] = numpy.add(a, b)
'''

record = sys.modules["grader.replay.record"]
original = record.describe_function


def forged(fn, options=None, seen=None, resolve=None):
    d = original(fn, options, seen, resolve)
    d["source"] = FORGED
    d["globals"]["numpy"] = ["module", "numpy"]
    d["globals"]["cuda"] = ["module", "numba.cuda"]
    return d


record.describe_function = forged


@cuda.jit
def add_kernel(a, b, c):
    s1 = cuda.shared.array(0, float32)
    s2 = cuda.shared.array(0, int32)
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] - b[i]


def launch(a, b, c):
    add_kernel[(c.size + 127) // 128, 128, 0, 1024](a, b, c)

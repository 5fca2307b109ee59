# expect: passed
# gpu: not run on a GPU; numba-cuda compiles `range(math.ceil(...))` over a float bound (checked with compile_ptx for sm_90), truncating it to an integer
# defect: each thread's share of the elements counted as a float, `range(math.ceil(c.size / threads))`: the doctor handed the float to Python's range and said `exception`
import math

from numba import cuda


@cuda.jit
def add(a, b, c):
    threads = cuda.gridsize(1)
    for k in range(math.ceil(c.size / threads)):
        i = k * threads + cuda.grid(1)
        if i < c.size:
            c[i] = a[i] + b[i]


def launch(a, b, c):
    add[4, 128](a, b, c)

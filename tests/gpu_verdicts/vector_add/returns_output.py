# expect: exception
# gpu: exception on an NVIDIA H200 too (2026-11-30, driver 580.159.04, numba-cuda 0.30.4: `ZEROGPU_BACKEND=gpu zerogpu check vector_add tests/gpu_verdicts/vector_add/returns_output.py --json --seed 7`)
# defect: a kernel ending in `return c` ran on the CPU engines
from numba import cuda


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]
    return c


def launch(a, b, c):
    add[(c.size + 127) // 128, 128](a, b, c)

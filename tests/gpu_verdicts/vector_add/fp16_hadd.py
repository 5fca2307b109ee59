# expect: wrong_result
# gpu: wrong_result on an NVIDIA H100 (2026-12-07, numba-cuda 0.30.4): the sum rounds through half precision
# defect: the CPU engines added in float32 (the simulator's `hadd` is `a + b`; the doctor had no `cuda.fp16`) and passed
from numba import cuda


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = cuda.fp16.hadd(a[i], b[i])


def launch(a, b, c):
    add[(c.size + 127) // 128, 128](a, b, c)

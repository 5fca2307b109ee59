# expect: passed
# gpu: passed on an NVIDIA H200 too (2026-11-30, driver 580.159.04, numba-cuda 0.30.4: `ZEROGPU_BACKEND=gpu zerogpu check vector_add tests/gpu_verdicts/vector_add/cuda_dtype_cast.py --json --seed 7`)
# defect: `cuda.float32(...)` exists in numba-cuda; the CPU engines refused it
from numba import cuda


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = cuda.float32(a[i]) + b[i]


def launch(a, b, c):
    add[(c.size + 127) // 128, 128](a, b, c)

# expect: passed
# gpu: passed, reasoned from numba-cuda 0.30.4's source, not yet measured on a GPU (`cuda.shared.array(0, float32)` is the launch's dynamic shared memory, 512 bytes here)
# defect: a 4th launch parameter sent the kernel to Numba's simulator, without race detection or float32 math
import numpy as np
from numba import cuda, float32

THREADS = 128


@cuda.jit
def block_sums(x, out):
    partial = cuda.shared.array(0, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    partial[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    step = cuda.blockDim.x // 2
    while step > 0:
        if t < step:
            partial[t] += partial[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        cuda.atomic.add(out, 0, partial[0])


def launch(x, out):
    out[:] = 0
    blocks = (x.size + THREADS - 1) // THREADS
    block_sums[blocks, THREADS, 0, THREADS * np.dtype(np.float32).itemsize](x, out)

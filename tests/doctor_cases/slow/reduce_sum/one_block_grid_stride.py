# expect: serial_work
"""A reduction done by one block: its 256 threads walk the whole array with a grid-stride
loop, however large the array."""
from numba import cuda, float32

THREADS = 256


@cuda.jit
def sum_kernel(x, out):
    partial = cuda.shared.array(THREADS, float32)
    tid = cuda.threadIdx.x
    s = float32(0.0)
    for i in range(tid, x.size, THREADS):
        s += x[i]
    partial[tid] = s
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if tid < stride:
            partial[tid] += partial[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        out[0] = partial[0]


def launch(x, out):
    sum_kernel[1, THREADS](x, out)

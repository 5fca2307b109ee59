# expect: race
# gpu: race (with the kernel doctor run beside the GPU); alone, a GPU passed it by luck on an NVIDIA H100 (2026-12-07)
# defect: block 0 zeroes `out[0]` inside the kernel while other blocks may already be adding to it
from numba import cuda, float32

THREADS = 256


@cuda.jit
def block_sums(x, out):
    s = cuda.shared.array(THREADS, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if cuda.blockIdx.x == 0 and t == 0:
        out[0] = 0.0
    s[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        cuda.atomic.add(out, 0, s[0])


def launch(x, out):
    block_sums[(x.size + THREADS - 1) // THREADS, THREADS](x, out)

# expect: passed
# gpu: passed on an NVIDIA H100 (2026-12-07, driver 580.159.04, numba-cuda 0.30.4: `bash bench/device_engines.sh`): numba-cuda built and ran a 64 KiB static shared array
# defect: the CPU refused it as over 48 KiB, the CUDA linker's limit elsewhere; on sm_90 the GPU's toolchain builds it
from numba import cuda, float32

THREADS = 256
SLOTS = 16384  # 64 KiB of float32


@cuda.jit
def block_sums(x, out):
    space = cuda.shared.array(SLOTS, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    space[t] = x[i] if i < x.size else 0.0
    space[SLOTS - 1 - t] = 0.0
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if t < step:
            space[t] += space[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        cuda.atomic.add(out, 0, space[0])


def launch(x, out):
    out[:] = 0
    block_sums[(x.size + THREADS - 1) // THREADS, THREADS](x, out)

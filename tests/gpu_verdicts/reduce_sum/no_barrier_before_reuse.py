# expect: race
# gpu: passed by luck on an NVIDIA H100 (2026-12-07, driver 580.159.04, numba-cuda 0.30.4: `bash bench/device_engines.sh`), checked alone; race with the kernel doctor beside the GPU (grader/checking/beside.py; reasoned, not yet run on a GPU)
# defect: no barrier between the tree's steps: a thread reads a partial sum another warp may not have written yet
from numba import cuda, float32

THREADS = 256


@cuda.jit
def block_sums(x, out):
    s = cuda.shared.array(THREADS, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        step //= 2  # missing: cuda.syncthreads() before the next step reads what this one wrote
    if t == 0:
        cuda.atomic.add(out, 0, s[0])


def launch(x, out):
    out[:] = 0
    block_sums[(x.size + THREADS - 1) // THREADS, THREADS](x, out)

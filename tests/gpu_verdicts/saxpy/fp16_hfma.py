# expect: wrong_result
# gpu: not run on a GPU; cuda.fp16 rounds its arguments and result to half precision there (hadd, hmul and hfma measured on an NVIDIA H100, 2026-12-07), far outside float32's tolerance
# defect: saxpy through `cuda.fp16.hfma` (one fused half-precision operation): the CPU engines must round through half precision as a GPU does, not compute in float32
from numba import cuda


@cuda.jit
def saxpy_kernel(x, y, out, alpha):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, out.size, stride):
        out[i] = cuda.fp16.hfma(alpha, x[i], y[i])


def launch(x, y, out, alpha):
    threads_per_block = 128
    per_block = 4 * threads_per_block
    blocks = min((out.size + per_block - 1) // per_block, 4096)
    saxpy_kernel[blocks, threads_per_block](x, y, out, alpha)

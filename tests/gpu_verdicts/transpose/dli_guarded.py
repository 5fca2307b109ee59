# expect: passed
# gpu: passed on an NVIDIA H100 (2026-12-07, driver 580.159.04, numba-cuda 0.30.4: `bash bench/device_engines.sh`), then too_slow as a speed (1.12x the baseline, 32% of the target)
# defect: NVIDIA DLI's shared-memory transpose, guarded for sizes that are not whole tiles
from numba import cuda, types

TILE = 32


@cuda.jit
def tile_transpose(a, transposed):
    tile = cuda.shared.array((TILE, TILE), types.float32)
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    if y < a.shape[0] and x < a.shape[1]:
        tile[cuda.threadIdx.y, cuda.threadIdx.x] = a[y, x]
    cuda.syncthreads()
    tx = cuda.blockIdx.y * TILE + cuda.threadIdx.x
    ty = cuda.blockIdx.x * TILE + cuda.threadIdx.y
    if ty < transposed.shape[0] and tx < transposed.shape[1]:
        transposed[ty, tx] = tile[cuda.threadIdx.x, cuda.threadIdx.y]


def launch(a, out):
    m, n = a.shape
    tile_transpose[((n + TILE - 1) // TILE, (m + TILE - 1) // TILE), (TILE, TILE)](a, out)

# expect: out_of_bounds
# gpu: out_of_bounds on an NVIDIA H100 (2026-12-07, driver 580.159.04, numba-cuda 0.30.4: `bash bench/device_engines.sh`)
# defect: NVIDIA DLI's shared-memory transpose as taught, for sizes that are whole tiles only
from numba import cuda, types

TILE = 32


@cuda.jit
def tile_transpose(a, transposed):
    tile = cuda.shared.array((TILE, TILE), types.float32)
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    tile[cuda.threadIdx.y, cuda.threadIdx.x] = a[y, x]
    cuda.syncthreads()
    tx = cuda.blockIdx.y * TILE + cuda.threadIdx.x
    ty = cuda.blockIdx.x * TILE + cuda.threadIdx.y
    transposed[ty, tx] = tile[cuda.threadIdx.x, cuda.threadIdx.y]


def launch(a, out):
    m, n = a.shape
    tile_transpose[((n + TILE - 1) // TILE, (m + TILE - 1) // TILE), (TILE, TILE)](a, out)

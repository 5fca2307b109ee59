# expect: passed
# gpu: passed on an NVIDIA H200 too (2026-11-30, driver 580.159.04, numba-cuda 0.30.4: `ZEROGPU_BACKEND=gpu zerogpu check transpose tests/gpu_verdicts/transpose/input_parameter_and_stream.py --json --seed 7`)
# defect: a parameter named `input` and `getattr(a, "stream", 0)` (as in numba-cuda's own transpose) were refused by the policy
from numba import cuda, float32

TILE = 32
PADDED = TILE + 1


@cuda.jit
def transpose_tiles(input, output):
    tile = cuda.shared.array((TILE, PADDED), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + tx
    row = cuda.blockIdx.y * TILE + ty
    if row < input.shape[0] and col < input.shape[1]:
        tile[ty, tx] = input[row, col]
    cuda.syncthreads()
    col = cuda.blockIdx.y * TILE + tx
    row = cuda.blockIdx.x * TILE + ty
    if row < output.shape[0] and col < output.shape[1]:
        output[row, col] = tile[tx, ty]


def launch(a, out):
    stream = getattr(a, "stream", 0)
    blocks = ((a.shape[1] + TILE - 1) // TILE, (a.shape[0] + TILE - 1) // TILE)
    transpose_tiles[blocks, (TILE, TILE), stream](a, out)

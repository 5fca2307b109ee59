# expect: wrong_result
"""The halo is filled with zeros instead of the neighbouring blocks' elements: right for a
single block, wrong at every block boundary inside x."""
from numba import cuda, float32

RADIUS = 3
THREADS_PER_BLOCK = 256
TILE = THREADS_PER_BLOCK + 2 * RADIUS  # the block's slice of x and a halo on each side


@cuda.jit
def stencil_kernel(x, weights, out):
    tile = cuda.shared.array(TILE, float32)  # the size must be a constant
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.size

    # 1. the block's slice of x, 0 past the end
    value = float32(0.0)
    if i < n:
        value = x[i]
    tile[tid + RADIUS] = value
    # ... and the halos: RADIUS elements on each side
    if tid < RADIUS:
        left = i - RADIUS
        value = float32(0.0)
        tile[tid] = value
        right = i + THREADS_PER_BLOCK
        value = float32(0.0)
        tile[tid + THREADS_PER_BLOCK + RADIUS] = value

    # 2. wait until the whole tile is loaded
    cuda.syncthreads()

    # 3. out[i] from the tile
    if i < n:
        acc = float32(0.0)
        for k in range(2 * RADIUS + 1):
            acc += weights[k] * tile[tid + k]
        out[i] = acc


def launch(x, weights, out):
    blocks = (x.size + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    stencil_kernel[blocks, THREADS_PER_BLOCK](x, weights, out)

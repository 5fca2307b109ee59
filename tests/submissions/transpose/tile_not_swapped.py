# expect: race
"""The tile is read back as it was written (tile[ty + k, tx]): the indices are never swapped
inside the tile, so each output element gets the element of `a` at the same place in the tile."""
from numba import cuda, float32

TILE = 32  # the tile is TILE × TILE elements
ROWS = 8  # a block is TILE × ROWS threads; each moves TILE // ROWS = 4 elements
PADDED = TILE + 1  # shared-array shapes must be constants: computed here, not in the kernel


@cuda.jit
def transpose_kernel(a, out):
    tile = cuda.shared.array((TILE, PADDED), float32)  # 33 columns: no bank conflicts
    m, n = a.shape
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row0 = cuda.blockIdx.y * TILE  # the tile's first row of a
    col0 = cuda.blockIdx.x * TILE  # the tile's first column of a

    # 1. a[row0 : row0+32, col0 : col0+32] -> tile; a warp reads along a row of a
    for k in range(0, TILE, ROWS):
        row = row0 + ty + k
        col = col0 + tx
        if row < m and col < n:
            tile[ty + k, tx] = a[row, col]

    # 2. wait until the whole tile is loaded
    cuda.syncthreads()

    # 3. tile, transposed -> out[col0 : col0+32, row0 : row0+32]; a warp writes along a row
    for k in range(0, TILE, ROWS):
        row = col0 + ty + k
        col = row0 + tx
        if row < n and col < m:
            out[row, col] = tile[ty + k, tx]


def launch(a, out):
    m, n = a.shape
    threads = (TILE, ROWS)
    blocks = ((n + TILE - 1) // TILE, (m + TILE - 1) // TILE)  # x across the columns of a
    transpose_kernel[blocks, threads](a, out)

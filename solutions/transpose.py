"""transpose — out = aᵀ, through shared-memory tiles.

`a` is an m × n float32 matrix; write its transpose: out[j, i] = a[i, j] (`out` is n × m).

The one-thread-per-element version is easy, but only half of it is fast: if the 32 threads
of a warp read 32 neighbours of one row of `a` (coalesced), they write 32 elements of one
*column* of `out`, m floats apart — 32 separate memory transactions. The fix is to go
through shared memory, one 32 × 32 tile at a time:

1. a block of 32 × 8 threads reads the tile of `a` at rows row0 … row0+31, columns
   col0 … col0+31 (row0 = 32·blockIdx.y, col0 = 32·blockIdx.x) into a shared array, each
   thread 4 rows: ty, ty + 8, ty + 16, ty + 24 — x along a row, so every read is coalesced;
2. `cuda.syncthreads()`: the whole tile must be there before anyone reads it back;
3. the same block writes the tile, transposed, to rows col0 … col0+31, columns
   row0 … row0+31 of `out`, reading tile[tx, ty + k]: x along a row of `out` again, so every
   write is coalesced too.

Shared memory is split into 32 banks of 4-byte words; a 32 × 32 float32 tile puts a whole
column in one bank, and reading tile[tx, …] down a column makes the 32 threads queue on it.
Declare the tile 32 × 33: the extra column shifts each row by one bank. The shape
of a shared array must be known when the kernel compiles: numbers, or names defined at
module level such as TILE and PADDED = TILE + 1. `TILE + 1` written inside the kernel does
not compile on a GPU (the simulator lets it pass).

- `out` arrives filled with garbage: write every element, and nothing outside.
- m and n need not be multiples of 32: guard the reads (row < m, col < n) and the writes
  (row < n, col < m) of the partial tiles at the edges.
"""
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
            out[row, col] = tile[tx, ty + k]


def launch(a, out):
    m, n = a.shape
    threads = (TILE, ROWS)
    blocks = ((n + TILE - 1) // TILE, (m + TILE - 1) // TILE)  # x across the columns of a
    transpose_kernel[blocks, threads](a, out)

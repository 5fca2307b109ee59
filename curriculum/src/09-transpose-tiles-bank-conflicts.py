# Source of curriculum/09-transpose-tiles-bank-conflicts.ipynb — edit here, then run `python curriculum/build.py`.

# %% [markdown]
# # 09 · Transpose: tiles for coalescing, and bank conflicts
#
# **In this notebook you will**
#
# - see why a plain transpose cannot coalesce both its reads and its writes;
# - use a shared-memory tile to turn the strided side into a coalesced one;
# - learn how shared memory is split into 32 *banks*, what a *bank conflict* is, and how one
#   extra column of padding removes it;
# - write `transpose`.

# %% tags=["setup"]
import grader  # first, before numba: it picks the GPU, or the simulator when there is none
import numpy as np
from numba import cuda

from grader.notebook import widgets

print(f"Running on: {grader.BACKEND}")

# %% [markdown]
# ## Worked example: the naive transpose
#
# One thread per element: `out[col, row] = a[row, col]`. With x walking the columns of `a`,
# a warp reads 32 neighbours of a row of `a`, which is coalesced.

# %%
@cuda.jit
def naive_transpose(a, out):
    col, row = cuda.grid(2)
    if row < a.shape[0] and col < a.shape[1]:
        out[col, row] = a[row, col]


a = np.arange(15, dtype=np.float32).reshape(3, 5)
d_out = cuda.device_array((5, 3), np.float32)
naive_transpose[(1, 1), (8, 4)](cuda.to_device(a), d_out)
print(a)
print("transposed:")
print(d_out.copy_to_host())
print("correct:", np.array_equal(d_out.copy_to_host(), a.T))

# %% [markdown]
# Correct, and half fast. The same warp *writes* `out[col, row]` for 32 consecutive `col`:
# that is 32 different **rows** of `out`, one element from each. Swap x and y and the writes
# coalesce but the reads don't. A transpose must read along rows and write along columns, or
# the other way round: one side is always strided. Here is what a strided warp access costs
# (drawn for a read; a write goes to memory in the same 32-byte sectors):

# %%
widgets.coalescing(rows=8, cols=32, order="column")

# %% [markdown]
# ## The fix: go through a shared tile
#
# 1. A block reads a 32 × 32 tile of `a` **along its rows** (coalesced) into shared memory.
# 2. `cuda.syncthreads()`.
# 3. It writes the tile to `out` **along the rows of `out`** (coalesced again), reading the
#    shared tile down its columns: `tile[tx, ty + k]`.
#
# The strided access has moved from global memory, where it costs whole sectors, to shared
# memory, where it is cheap... as long as it does not hit a *bank conflict*.

# %% [markdown]
# ## Shared-memory banks
#
# Shared memory is split into **32 banks**; consecutive 4-byte words go to consecutive banks,
# so word `w` lives in bank `w % 32`. A warp's 32 accesses are served at once if they hit 32
# different banks; accesses to different words of the *same* bank queue one after another.
#
# A 32 × 32 float32 tile has rows exactly 32 words long, so `tile[r, c]` is in bank `c`
# whatever `r` is: **a whole column sits in one bank**. Reading `tile[tx, ty + k]` for
# `tx = 0 … 31` walks down a column: 32 accesses to one bank, a 32-way conflict.
#
# Give the tile 33 columns. Now `tile[r, c]` is word `33 r + c`, in bank `(r + c) % 32`, and
# the 32 elements of a column fall in 32 different banks.

# %%
def banks_of_column(row_length, column=0, rows=32):
    """The bank of each element tile[r, column], r = 0 ... rows - 1."""
    return [(r * row_length + column) % 32 for r in range(rows)]


for width in (32, 33):
    banks = banks_of_column(width)
    distinct = len(set(banks))
    verdict = "no conflict" if distinct == 32 else f"a {32 // distinct}-way conflict"
    print(f"32 x {width} tile: column 0 lies in banks {banks[:6]} ..., "
          f"{distinct:2} different bank(s): {verdict}")

# %% [markdown]
# The 33rd column is never used; it only shifts each row one bank to the right. One more
# detail: a shared array's shape must be known when the kernel compiles, so write the padded
# width as a module-level constant (`PADDED = TILE + 1`), not as `TILE + 1` inside the kernel.
# The simulator accepts both; a GPU only the first.

# %% [markdown]
# ## Your turn: `transpose`
#
# Blocks of 32 × 8 threads move a 32 × 32 tile, each thread 4 elements (rows `ty`, `ty + 8`,
# `ty + 16`, `ty + 24`). Guard the reads and the writes separately: `a` is `m × n` and `out`
# is `n × m`, and neither needs to be a multiple of 32.

# %% [exercise] transpose

# %% [check] transpose

# %% [markdown]
# The cases include a single element, a single row, sizes one short of and one past a tile,
# primes and a wide matrix. If the "one past a tile" case fails, look at the guards of the
# write: the row of `out` comes from `col0`, the column from `row0`.
#
# On the simulator, a correct unpadded tile passes too: bank conflicts cost time, not
# correctness. On a GPU the check compares your speed with the naive transpose; the padded
# tile is typically 2 to 3 times faster.

# %% [markdown]
# ## Recap
#
# - A transpose reads rows and writes columns: one side is strided in global memory.
# - A shared tile lets both global sides be coalesced; the strided access happens in shared
#   memory instead.
# - Shared memory has 32 banks; a warp reading a column of a 32-wide float32 tile hits one
#   bank 32 times. Pad the tile to 33 columns.
# - Shared-array shapes are compile-time constants: define them at module level.
#
# **Next:** [10 · Matrix multiply](10-matmul-roofline-tiling.ipynb): arithmetic intensity,
# the roofline, and tiling for reuse.

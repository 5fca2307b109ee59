# Source of curriculum/10-matmul-roofline-tiling.ipynb — edit here, then run `python curriculum/build.py`.

# %% [markdown]
# # 10 · Matrix multiply: arithmetic intensity, the roofline, and tiling
#
# **In this notebook you will**
#
# - write the naive matrix product, one thread per output element;
# - compute a kernel's *arithmetic intensity* (FLOPs per byte) and place it on a *roofline*
#   to see whether memory or arithmetic limits it;
# - raise the intensity by *tiling*: loading blocks of A and B into shared memory once and
#   using every loaded number 16 times;
# - write `matmul_naive` and `matmul_tiled`, and see where they land.

# %% tags=["setup"]
import grader  # first, before numba: it picks the GPU, or the simulator when there is none
import numpy as np
from numba import cuda

from grader.notebook import widgets

print(f"Running on: {grader.BACKEND}")

# %% [markdown]
# ## The naive product
#
# `C = A @ B` with `A` of shape `m × k` and `B` of shape `k × n`:
# `c[row, col] = Σ_kk a[row, kk] · b[kk, col]`. One thread per element of `C`, a 2-D grid with
# x along the columns (coalesced, as in notebook 04), and a loop over `kk` in each thread.
#
# ## Your turn (1 of 2): `matmul_naive`

# %% [exercise] matmul_naive

# %% [check] matmul_naive

# %% [markdown]
# Keep this `launch` under another name: the next exercise defines a new `launch`, and the
# end of the notebook measures both.

# %%
naive_launch = launch

# %% [markdown]
# ## Arithmetic intensity
#
# A GPU has two speed limits: how many bytes per second its memory delivers, and how many
# floating-point operations (FLOPs) per second its cores do. Which one binds depends on the
# kernel's **arithmetic intensity**: FLOPs done per byte moved to or from memory.
#
# - `vector_add`: 1 addition per 12 bytes (two loads, one store): 0.08 FLOP/byte.
# - naive matmul, per thread: `k` multiply-adds (2 FLOPs each) for `2k` loads of 4 bytes:
#   0.25 FLOP/byte, and that is with every load coming from memory.
# - a whole `n × n` product *could* do `2n³` FLOPs on `3n²` numbers: 170 FLOP/byte at
#   n = 1024. The work is there; the naive kernel just reloads everything.

# %%
def intensity(flops, nbytes):
    return flops / nbytes


k = 1024
kernels = {
    "vector_add": intensity(1, 12),
    "naive matmul (per thread)": intensity(2 * k, 2 * k * 4),
    "16 x 16 tiles (per thread)": intensity(2 * k, 2 * k * 4 / 16),
    "32 x 32 tiles (per thread)": intensity(2 * k, 2 * k * 4 / 32),
    "ideal 1024^3 product": intensity(2 * k**3, 3 * k * k * 4),
}
for name, value in kernels.items():
    print(f"{name:27} {value:6.2f} FLOP/byte")

# %% [markdown]
# ## The roofline
#
# The best a kernel can do is the lower of its two limits:
#
# `attainable FLOP/s = min(peak FLOP/s, bandwidth × intensity)`
#
# Drawn on log-log axes, that is a sloped roof (memory-bound, left) meeting a flat roof
# (compute-bound, right) at the *ridge point*. A data-centre GPU's ridge is around 10 to 20
# FLOP/byte for float32: anything below it cannot use all the arithmetic, however clever its
# inner loop. The naive matmul, at 0.25, is far to the left.

# %%
widgets.roofline()

# %% [markdown]
# ## Tiling: reuse what you load
#
# Threads that compute neighbouring elements of `C` need the same rows of `A` and the same
# columns of `B`. So let a block of 16 × 16 threads compute a 16 × 16 tile of `C`, and walk
# along `k` one tile at a time:
#
# 1. each thread loads **one** element of the current `A` tile and **one** of the `B` tile
#    into shared memory;
# 2. `cuda.syncthreads()`: the tiles are complete;
# 3. each thread adds 16 products, reading both tiles from shared memory;
# 4. `cuda.syncthreads()` again: nobody may overwrite a tile that a slower thread is still
#    reading.
#
# Each number loaded from global memory is now used 16 times: the intensity goes up 16-fold.
# Step through it (the picture uses 8 × 8 matrices and 4 × 4 tiles):

# %%
widgets.tiling_animation(n=8, tile=4)

# %% [markdown]
# Edges: `m`, `n` and `k` need not be multiples of 16. Where a tile sticks out of `A` or `B`,
# store 0 in the shared tile (zeros add nothing to the sum), and guard only the final write to
# `C`. Never `return` early: the threads outside `C` must still help load tiles and reach
# every barrier.

# %% [markdown]
# ## Your turn (2 of 2): `matmul_tiled`

# %% [exercise] matmul_tiled

# %% [check] matmul_tiled

# %% [markdown]
# **If it says "Not yet":** a *wrong result* only in the last rows or columns is usually a
# load that is not replaced by 0 outside the matrix; wrong values everywhere after the first
# tile step, a missing second `cuda.syncthreads()` (on a GPU that shows up as a *race*).

# %% [markdown]
# ## Where do your kernels sit? Measure
#
# We check both kernels again; on a GPU the checks time them, and their FLOP/s go on this
# GPU's measured roofline. On the simulator nothing is timed, so the chart shows only the
# roofline's shape and says that no GPU figures are available.

# %%
results = [grader.check("matmul_naive", naive_launch), grader.check("matmul_tiled", launch)]
widgets.roofline(points=widgets.roofline_points_from_results(results),
                 ceilings=widgets.ceilings_from_results(results))

# %% [markdown]
# For reference, the kernels of this course measured on an H200 at 4096 × 4096 × 4096:
#
# | kernel | TFLOP/s |
# | --- | --- |
# | naive, x along the rows (uncoalesced) | 1.0 |
# | naive, x along the columns (your `matmul_naive`) | 1.4 |
# | 16 × 16 shared tiles (your `matmul_tiled`) | 7.8 |
# | 128 × 128 tiles, 8 × 8 outputs per thread in registers (the course's target) | 25 |
# | cuBLAS | 51 |
#
# Tiling gave a factor of 5. The rest of the way to cuBLAS is *more* reuse: each thread
# computes a small block of outputs from values held in registers (register tiling), loads
# are widened and overlapped with arithmetic, and, beyond float32 CUDA cores, tensor cores.

# %% [markdown]
# ## Recap
#
# - Arithmetic intensity = FLOPs per byte moved; the roofline `min(peak, bandwidth ×
#   intensity)` says which limit binds.
# - The naive matmul reloads every number: 0.25 FLOP/byte, memory-bound.
# - Tiling loads each number once per tile and uses it 16 times; two barriers per tile step.
# - Pad partial tiles with zeros, and let every thread reach every barrier.
#
# **Next:** [11 · Fused softmax](11-softmax-fused-production.ipynb): fusion, numerical safety,
# and making kernels production-ready.

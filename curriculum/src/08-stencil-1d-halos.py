# Source of curriculum/08-stencil-1d-halos.ipynb — edit here, then run `python curriculum/build.py`.

# %% [markdown]
# # 08 · 1-D stencil: shared tiles and halos
#
# **In this notebook you will**
#
# - meet *stencils*: every output is a weighted sum of its input's neighbours (a blur, a
#   derivative, a convolution);
# - count how often each input is read, and why that invites shared memory;
# - load a block's slice of the input *plus a halo* into a shared tile;
# - handle the edges of the array, including a trap: negative indices wrap around in Numba;
# - give each thread 4 outputs, so enough loads are in flight to stream;
# - write `stencil_1d`, and hear what a GPU says about whether the tile was worth it.

# %% tags=["setup"]
import grader  # first, before numba: it picks the GPU, or the simulator when there is none
import numpy as np
from numba import cuda, float32

print(f"Running on: {grader.BACKEND}")

# %% [markdown]
# ## Worked example: a 3-point moving average, straight from global memory
#
# `out[i] = (x[i-1] + x[i] + x[i+1]) / 3`, counting values outside the array as 0. Each
# thread reads its three neighbours from global memory.

# %%
@cuda.jit
def moving_average(x, out):
    i = cuda.grid(1)
    n = x.size
    if i < n:
        total = float32(0.0)
        for j in range(i - 1, i + 2):
            if 0 <= j < n:  # outside the array counts as 0
                total += x[j]
        out[i] = total / 3


x = np.arange(10, dtype=np.float32) ** 2
d_out = cuda.device_array_like(x)
moving_average[1, 32](cuda.to_device(x), d_out)
expected = np.convolve(x, np.ones(3) / 3, mode="same")
print("x:       ", x)
print("averaged:", np.round(d_out.copy_to_host(), 2))
print("matches np.convolve:", np.allclose(d_out.copy_to_host(), expected))

# %% [markdown]
# Each `x[j]` is read by 3 threads here; with the 7-point stencil of the exercise, by 7. So
# the kernel issues 7 global loads per output while only 1 new value is needed. Shared
# memory offers a way out: each block loads its slice of `x` **once** into a shared *tile*,
# and the threads then read their neighbours from the tile.

# %% [markdown]
# ## Tiles need halos
#
# The threads at the edges of a block need neighbours that belong to the next block's slice.
# So a block's tile is its slice plus `RADIUS` extra values on each side, the **halo**. For
# blocks of 8 threads and radius 3 (the exercise uses blocks of 256):

# %%
radius, block_size, n_demo = 3, 8, 20
for block in range((n_demo + block_size - 1) // block_size):
    first = block * block_size
    tile = list(range(first - radius, first + block_size + radius))
    shown = ["  ." if j < 0 or j >= n_demo else f"{j:3}" for j in tile]
    print(f"block {block}: tile holds x[...] = {' '.join(shown)}")
print("(' .' = outside the array: store 0)")

# %% [markdown]
# Every tile is `block_size + 2 × radius` long. The middle `block_size` values are loaded by
# the block's threads, one each; the `2 × radius` halo values are loaded by a few threads
# doing double duty (in the exercise: threads 0, 1 and 2 each load one value on the left and
# one on the right). Then `cuda.syncthreads()`, and only then may anyone read the tile.

# %% [markdown]
# ## The negative-index trap
#
# At the left edge, `i - 3` is negative for the first threads. In Python and in Numba a
# negative index does not fail: it counts from the end. Neither the GPU nor the simulator
# will complain; you just read the wrong number.

# %%
@cuda.jit
def read_left_neighbour(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i - 1]  # for i = 0 this reads x[-1], the LAST element


x = np.array([10, 20, 30, 40], np.float32)
d_out = cuda.device_array_like(x)
read_left_neighbour[1, 4](cuda.to_device(x), d_out)
print("left neighbours:", d_out.copy_to_host(), "<- the first one should have been 'none'")

# %% [markdown]
# So test `j >= 0` yourself, as well as `j < n`, whenever an index can go below zero.

# %% [markdown]
# ## One output per thread is not enough
#
# A tile with one output per thread has a weakness: each thread loads a single value, then
# the whole block waits at the barrier for the slowest load. A GPU streams memory at full
# speed only with many loads in flight at once (about 16 KB per multiprocessor on an H200),
# and 2048 threads each waiting on one 4-byte load cannot supply that. Measured on an H200,
# that tile ran at **0.8×** the speed of the naive kernel, whose loads mostly hit the
# **L1 cache** (each multiprocessor keeps recently read lines there).
#
# The fix is to give each thread more work: **4 outputs per thread**. A block of 256 threads
# then owns a slice of `SPAN = 1024` outputs; each thread issues 4 loads, 256 apart, before
# anyone waits (each of the 4 is still coalesced: the 32 lanes of a warp read 32 neighbours),
# and one barrier serves 1024 outputs. On the H200 that was about **1.09×** the naive
# kernel's speed. This *thread coarsening* is a standard move whenever a kernel does little
# work per load.

# %%
span, per_thread, threads = 12, 3, 4  # small numbers to print: 4 threads, 3 outputs each
for t in range(threads):
    print(f"thread {t} loads slice positions {[t + k * threads for k in range(per_thread)]}")

# %% [markdown]
# ## Your turn: `stencil_1d`
#
# `out[i] = Σ weights[k] · x[i + k - 3]` for `k = 0 … 6`. Load the halos (0 outside the
# array), put a barrier after the tile is complete, and add up the seven weighted
# neighbours from the tile, for each of a thread's 4 outputs.

# %% [exercise] stencil_1d

# %% [check] stencil_1d

# %% [markdown]
# **If it says "Not yet":** wrong values only near the start of the array are the
# negative-index trap; wrong values every 1024 elements (the slice of one block) are a halo
# loaded from the wrong place; values that change between runs (on a GPU: *race*) mean a
# missing `cuda.syncthreads()`.

# %% [markdown]
# ## Was the tile worth it? Measure, don't guess
#
# On older GPUs, the shared tile was a clear win on its own. On recent ones the L1 cache
# catches most of the naive kernel's 7-fold reuse, and what made the difference on the H200
# was keeping enough loads in flight: the tile with 4 outputs per thread beat the naive
# kernel, the tile with one did not. On a GPU this check asks for 1.04× the naive
# baseline's speed, which a one-output tile does not reach.
#
# The course's target kernel for this exercise (`kernels/stencil_1d.py`) goes one step
# further and drops shared memory: each thread loads 10 neighbours into registers and makes
# 4 outputs from them, and the L1 cache serves the inputs that neighbouring threads share.
# On an H200 it ran at 0.31 ms, against 0.45 ms for the 4-output tile and 0.49 ms for the
# naive kernel (n = 2²⁷, 2026-11-29): the fastest version was neither the textbook one nor
# the naive one, which only a measurement could tell.
#
# The tile matters more with wider stencils, 2-D and 3-D stencils (a 5 × 5 blur reads
# every pixel 25 times), or data reused across many steps: there it makes the reuse
# guaranteed rather than hoped for. And the lesson matters most: *measure*, on the GPU you
# target.

# %% [markdown]
# ## Recap
#
# - A stencil reads each input many times: a candidate for a shared-memory tile.
# - A tile is the block's slice plus a halo of `radius` values on each side; a few threads
#   load the halo; barrier before reading.
# - Values outside the array are handled explicitly, and negative indices do not fail:
#   test `j >= 0`.
# - One load per thread is too little in flight: give each thread several outputs
#   (coarsening), with loads that stay coalesced.
# - Caches can make a tile alone unnecessary: measure on the GPU before believing either way.
#
# **Next:** [09 · Transpose](09-transpose-tiles-bank-conflicts.ipynb): a tile that fixes
# coalescing, and shared-memory bank conflicts.

# Source of curriculum/07-histogram-privatisation.ipynb — edit here, then run `python curriculum/build.py`.

# %% [markdown]
# # 07 · Histogram: atomic contention and privatisation
#
# **In this notebook you will**
#
# - count with atomics when many threads update the same few counters;
# - measure *contention*: how many threads of a warp queue on the same counter, for
#   friendly and unfriendly data;
# - *privatise*: count in a per-block histogram in shared memory, then merge;
# - write `histogram` for 256 byte values.

# %% tags=["setup"]
import grader  # first, before numba: it picks the GPU, or the simulator when there is none
import numpy as np
from numba import cuda

print(f"Running on: {grader.BACKEND}")

# %% [markdown]
# ## Counting is a reduction too
#
# A histogram of bytes counts, for each value `v` from 0 to 255, how many inputs equal `v`:
# 256 small reductions at once. Each thread reads a value and adds 1 to its bin. Two threads
# with the same value race on the same bin, exactly like the sum in notebook 06, and the
# slow-motion race shows it again: 16 threads, all holding the value 3.

# %%
@cuda.jit
def racy_count(values, bins):
    i = cuda.grid(1)
    v = values[i]
    seen = bins[v]  # load
    cuda.syncthreads()  # (widen the gap, as in notebook 06)
    bins[v] = seen + 1  # store: the other threads' counts are overwritten


@cuda.jit
def atomic_count(values, bins):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(bins, values[i], 1)


threes = cuda.to_device(np.full(16, 3, np.uint8))
for kernel in (racy_count, atomic_count):
    bins = cuda.to_device(np.zeros(256, np.int32))
    kernel[1, 16](threes, bins)
    print(f"{kernel.__name__:12}: bins[3] = {bins.copy_to_host()[3]:2}  (16 threes)")

# %% [markdown]
# Atomics make the counts right. The question for a histogram is how *fast* they are.

# %% [markdown]
# ## Contention
#
# Atomics on *different* addresses run in parallel; atomics on the *same* address queue, one
# after another. So the speed of an atomic histogram depends on the data. For every warp of
# 32 consecutive values, let's count how many lanes hit its most popular bin: that is how
# long the warp's atomic instruction queues.

# %%
def worst_queue_per_warp(values):
    """For each warp (32 consecutive values), the size of its largest same-bin group."""
    warps = values[: values.size // 32 * 32].reshape(-1, 32)
    return np.array([np.bincount(w, minlength=256).max() for w in warps])


rng = np.random.default_rng(0)
uniform = rng.integers(0, 256, 1 << 15).astype(np.uint8)  # noise: all bins equally likely
dark_photo = np.where(rng.random(1 << 15) < 0.9, 0, rng.integers(0, 256, 1 << 15)).astype(np.uint8)
for name, data in (("uniform bytes", uniform), ("90% black pixels", dark_photo)):
    queue = worst_queue_per_warp(data)
    print(f"{name:17}: a warp's atomic queues {queue.mean():4.1f} deep on average (at most 32)")

# %% [markdown]
# Real data is rarely uniform: images have backgrounds, text has spaces and `e`s. And across
# the whole GPU, every warp of every block hits the same few hot bins in global memory.
# Those atomics are slow (they travel to the L2 cache) and they all queue on one address.

# %% [markdown]
# ## Privatisation
#
# Give each block its **own** histogram in shared memory:
#
# 1. the block clears its 256 shared counters, then `cuda.syncthreads()`;
# 2. each thread adds its value's 1 to the *shared* counter, with a shared-memory atomic:
#    on-chip, fast, and contended only by the threads of this block; `cuda.syncthreads()`;
# 3. each of the block's 256 threads merges one bin into the global histogram: one global
#    atomic per non-zero bin.
#
# What that does to the hottest bin, for a million mostly-black pixels in blocks of 256:

# %%
n, per_block = 1 << 20, 256
photo = np.where(rng.random(n) < 0.9, 0, rng.integers(0, 256, n)).astype(np.uint8)
blocks = photo.reshape(-1, per_block)
per_value = int((photo == 0).sum())
per_block_merge = int((blocks == 0).any(axis=1).sum())
print(f"global atomics on bin 0, one per value:          {per_value:9,}")
print(f"global atomics on bin 0, one per block (merged): {per_block_merge:9,}"
      f"  ({per_value / per_block_merge:.0f} times fewer)")

# %% [markdown]
# Hundreds of times fewer global atomics on the hot bin; the other collisions happen in
# shared memory, inside one multiprocessor. The fastest kernels go one step further: a
# grid-stride loop lets each block count thousands of values before it merges once.

# %% [markdown]
# ## Your turn: `histogram`
#
# The block has 256 threads, one per bin, so thread `t` clears and later merges bin `t`.
# `bins` arrives zeroed. Watch the two barriers: the shared histogram must be clear before
# anyone counts into it, and complete before anyone merges it.

# %% [exercise] histogram

# %% [check] histogram

# %% [markdown]
# **If it says "Not yet":** counts that are too high in some bins usually mean the shared
# histogram was not cleared (shared memory starts with garbage, like device arrays); counts
# that are too low, a plain `+=` instead of an atomic, or a missing barrier before the merge.
#
# On a GPU, the check times your kernel against the baseline of one global atomic per value,
# on data with hot bins. On the simulator, privatisation changes nothing you can see: it is a
# speed technique, and the simulator does not measure speed.

# %% [markdown]
# ## Going further: how far privatisation goes
#
# The bundled target (`kernels/histogram.py`, the "fraction of the target" in your speed
# section) privatises once more, down to the lane. Shared memory is 32 *banks*; two atomics
# of one warp instruction on *different* words of the same bank queue, one after the other.
# With one 256-bin histogram per block (or per warp), the random values of a warp land about
# 16 different bins in a handful of banks, and each conflict costs the shared-memory pipe
# another pass. So the target gives every lane a **column** of its own: 256 counters at
# words `32 * v + lane` (32 KB a block). Lane `L` only ever touches bank `L`, so a warp's 32
# atomics never conflict, whatever the data; the merge adds up 32 columns per bin. With
# 16-byte loads, the target counts 2^28 bytes at about 90% of the GPU's copy bandwidth on an
# H200, where one histogram per warp stayed near 68%.
#
# One catch, and a lesson of its own: written with `cuda.atomic.add(table, 32 * v + lane, 1)`,
# the same layout was *slower*: Numba's index arithmetic (64-bit sums, negative-index checks)
# cost about nine instructions a byte, and the multiprocessor ran out of instruction slots
# before the banks mattered. The target computes each address in a few lines of inline PTX
# (`grader/authoring/ptx.py`). When a layout that should win loses, count the instructions.

# %% [markdown]
# ## Recap
#
# - Many threads incrementing shared counters need atomics.
# - Atomics on the same address queue; how badly depends on the data (contention).
# - Privatise: count in a per-block shared-memory histogram, then merge once per bin.
# - Clear shared memory before use, and put a barrier between every phase.
# - Going further: a column of counters per lane keeps a warp's atomics out of each other's
#   banks.
#
# **Next:** [08 · 1-D stencil](08-stencil-1d-halos.ipynb): neighbours, shared tiles, and
# halos.

# Source of curriculum/13-scan-prefix-sums.ipynb — edit here, then run `python curriculum/build.py`.

# %% [markdown]
# # 13 · Scan: prefix sums across blocks
#
# **In this notebook you will**
#
# - see what a *scan* (prefix sum) is for, and why it looks sequential;
# - scan a warp in five shuffles with `cuda.shfl_up_sync`, then a block from its warps;
# - carry totals from block to block: scan the blocks' totals, then add them back;
# - write `scan`, one function for int32 and float32 arrays.

# %% tags=["setup"]
import grader  # first, before numba: it picks the GPU, or the simulator when there is none
import matplotlib.pyplot as plt
import numpy as np
from numba import cuda, int32

ON_GPU = grader.BACKEND == "gpu"
print(f"Running on: {grader.BACKEND}")

# %% [markdown]
# ## What a scan is for
#
# An inclusive scan replaces every element by the sum of itself and everything before it:
# `[3, 1, 4, 1, 5]` becomes `[3, 4, 8, 9, 14]`. It is how a GPU turns "how many does each
# thread produce" into "where does each thread write": if thread `i` keeps `counts[i]` items,
# it writes them from `ends[i] - counts[i]` on. Sorting, compacting, histogram offsets and
# sparse matrices all lean on it.

# %%
counts = np.array([3, 1, 4, 1, 5, 0, 2], np.int32)
ends = np.cumsum(counts)
print("counts:", counts)
print("ends:  ", ends, " (thread i writes at ends[i] - counts[i] ...)")

# %% [markdown]
# Written as a loop, `out[i] = out[i - 1] + x[i]`, each step needs the one before: it looks
# hopelessly sequential. The trick is to do a little more adding, in parallel.

# %% [markdown]
# ## A warp scan in five shuffles
#
# Every lane adds the value 1 lane below it, then 2 below, 4, 8, 16. After the step with
# offset `d`, lane `k` holds the sum of lanes `k - 2d + 1 .. k`; after five steps, all of
# `0 .. k`. `cuda.shfl_up_sync(mask, value, d)` gives lane `k` the value of lane `k - d`;
# lanes below `d` get their own value back and must not add it. Every lane calls the shuffle;
# only the adding sits in the `if`.

# %%
FULL_MASK = 0xFFFFFFFF


@cuda.jit
def warp_scan_steps(levels):
    lane = cuda.threadIdx.x
    value = int32(1)  # every lane starts with 1: the prefix sums count lanes
    levels[0, lane] = value
    offset, step = 1, 1
    while offset < 32:
        below = cuda.shfl_up_sync(FULL_MASK, value, offset)
        if lane >= offset:
            value += below
        levels[step, lane] = value
        offset *= 2
        step += 1


def scan_steps():
    levels = cuda.device_array((6, 32), np.int32)
    warp_scan_steps[1, 32](levels)
    return levels.copy_to_host()


# Without a GPU the kernel doctor runs it: Numba's own simulator has no warp functions.
levels = scan_steps() if ON_GPU else grader.doctor.run(scan_steps)
fig, ax = plt.subplots(figsize=(9, 2.6))
ax.imshow(levels, cmap="Greens", aspect="auto", vmin=0, vmax=40)
for (step, lane), v in np.ndenumerate(levels):
    ax.text(lane, step, v, ha="center", va="center", fontsize=6)
ax.set_yticks(range(6), ["start", "+1 below", "+2", "+4", "+8", "+16"])
ax.set_xlabel("lane")
ax.set_title("a warp scan of 32 ones: lane k ends with k + 1")
plt.show()

# %% [markdown]
# 5 × 32 additions instead of 31: a parallel scan does more work than the loop, in 5 steps
# instead of 31. That trade is the whole idea.

# %% [markdown]
# ## From warps to a block
#
# A block of 128 threads is 4 warps, each scanned on its own. Lane 31 of each warp then holds
# its warp's total: it writes it to a shared array of 4; after `cuda.syncthreads()`, warp 0
# scans those 4 totals (another warp scan, lanes 4–31 with 0) and writes them back; after a
# second barrier, every warp but the first adds the scanned total of the warp before it.
# The block's last thread now holds the block's total.

# %% [markdown]
# ## Across blocks: scan the totals, add them back
#
# Blocks cannot wait for each other inside a launch, so the carry from block to block takes
# more launches:
#
# 1. every block scans its own elements and writes its total to `block_totals[b]`;
# 2. `block_totals` is scanned, with the same function (it may itself need several blocks);
# 3. every element of block `b > 0` adds the scanned total of block `b - 1`.
#
# Here are the three stages on 12 ones with blocks of 4:

# %%
ones = np.ones(12, np.int32)
per_block = np.cumsum(ones.reshape(3, 4), axis=1)
totals = per_block[:, -1]
carried = per_block + np.concatenate([[0], np.cumsum(totals)[:-1]])[:, None]
fig, axes = plt.subplots(3, 1, figsize=(7, 2.4))
for ax, row, label in zip(axes, (per_block.ravel(), np.repeat(np.cumsum(totals), 4), carried.ravel()),
                          ("1. each block alone", "2. scanned block totals", "3. added back")):
    ax.imshow(row[None, :], cmap="Oranges", aspect="auto", vmin=0, vmax=14)
    for k, v in enumerate(row):
        ax.text(k, 0, v, ha="center", va="center", fontsize=8)
    ax.axvline(3.5, color="k")
    ax.axvline(7.5, color="k")
    ax.set_yticks([0], [label])
    ax.set_xticks([])
plt.tight_layout()
plt.show()

# %% [markdown]
# Memory traffic: step 1 reads `x` and writes `out`, step 3 reads and writes `out` again:
# about 4n elements moved where a copy moves 2n. The bundled target reads and writes each
# element once: tiles learn the total before them from tiles still running (*decoupled
# look-back*, Merrill and Garland, 2016). That is for after the exercise.

# %% [markdown]
# ## One function, two types
#
# The exercise scans an int32 array (counts) and a float32 one (amounts) with the same
# `scan`. Numba compiles each kernel once per argument type, so the kernels only need to
# speak of "the type of x": `x.dtype.type(0)` is a zero of that type and
# `cuda.shared.array(WARPS_PER_BLOCK, x.dtype)` an array of it. Scratch arrays for the block
# totals come from `cuda.device_array(blocks, x.dtype)` in the host code.

# %% [markdown]
# ## Your turn: `scan`
#
# Fill in the warp scan's shuffle, the warps' totals, the add of the warp before, the add-back
# kernel, and the recursion in `scan`. Every element of both outputs must be written.

# %% [exercise] scan

# %% [check] scan

# %% [markdown]
# **If it says "Not yet":** look at the index of the first wrong element. Inside the first
# 32: the warp scan. Inside the first 128: the warps' totals. At 128 and beyond: the carry
# between blocks (is block `b` adding the total of block `b - 1`, and is the last case, with
# more blocks than a block has threads, scanning its totals with `scan` itself?). *Race* with
# a message about a mask: a shuffle inside the `if lane >= offset`.

# %% [markdown]
# ## Why float32 prefix sums drift
#
# Every prefix is a float32 sum, and rounding errors grow with the number of terms added: the
# grader allows element `i` an error that grows like √(i + 1) times the sum of |x| up to it.
# Here is a left-to-right float32 running sum of a million values against float64:

# %%
amounts = np.random.default_rng(2).uniform(-1, 1, 1_000_000).astype(np.float32)
drift = np.abs(np.cumsum(amounts, dtype=np.float32) - np.cumsum(amounts, dtype=np.float64))
for i in (10, 1_000, 100_000, 999_999):
    print(f"after {i + 1:>9,} terms: float32 is off by {drift[i]:.2e}")

# %% [markdown]
# ## Recap
#
# - A scan gives every element the sum of everything up to it: where to write, how far along.
# - A warp scan: `cuda.shfl_up_sync` by 1, 2, 4, 8, 16, every lane calling, only lanes
#   `>= offset` adding.
# - A block scan: warp scans, the warps' totals scanned by one warp, the warp before added.
# - Across blocks: scan the blocks' totals (recursively), then add them back; one pass with
#   decoupled look-back halves the memory traffic.
#
# This is the last rung of the ladder. Where next: streams to overlap copies with kernels,
# cooperative groups, and the libraries (CUB, CuPy, Thrust) whose scans and sorts are built
# from exactly these pieces.

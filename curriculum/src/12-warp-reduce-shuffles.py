# Source of curriculum/12-warp-reduce-shuffles.ipynb — edit here, then run `python curriculum/build.py`.

# %% [markdown]
# # 12 · Warp shuffles: a reduction without shared memory
#
# **In this notebook you will**
#
# - meet the *warp* as a programming unit: 32 lanes that can read each other's registers;
# - move values between lanes with `cuda.shfl_down_sync`, and see what its *mask* promises;
# - add up a warp's 32 values in five steps, and a block's with one shared value per warp;
# - write `warp_reduce`.

# %% tags=["setup"]
import grader  # first, before numba: it picks the GPU, or the simulator when there is none
import matplotlib.pyplot as plt
import numpy as np
from numba import cuda, float32, int32

ON_GPU = grader.BACKEND == "gpu"
print(f"Running on: {grader.BACKEND}")

# %% [markdown]
# ## A warp is 32 lanes
#
# A block's threads are issued in groups of 32, *warps*: thread `t` of a block is *lane*
# `t % 32` of warp `t // 32`. Each lane has its own registers (its local variables), and
# until now the only way for one thread to see another's value was to write it to shared
# memory, wait at `cuda.syncthreads()`, and read it back.
#
# Within a warp there is a shortcut. `cuda.shfl_down_sync(mask, value, delta)` is called by
# every lane at once; each lane passes its own `value` and gets back the `value` of the lane
# `delta` places above it, straight from that lane's registers: no memory, no block barrier.
# A lane near the top, with no lane `delta` above it, gets its own value back.

# %%
FULL_MASK = 0xFFFFFFFF  # one bit per lane: all 32 lanes take part


@cuda.jit
def look_down(got):
    lane = cuda.threadIdx.x % 32
    got[lane] = cuda.shfl_down_sync(FULL_MASK, lane * 10, 4)  # my value: lane * 10


def shuffle_once():
    got = cuda.device_array(32, np.int64)
    look_down[1, 32](got)
    return got.copy_to_host()


# Without a GPU the kernel doctor runs it: Numba's own simulator has no warp functions.
got = shuffle_once() if ON_GPU else grader.doctor.run(shuffle_once)
print("lane:", np.arange(32))
print("got: ", got)

# %% [markdown]
# Lane 0 got lane 4's 40, lane 27 got lane 31's 310, and lanes 28–31, with nobody 4 above
# them, kept their own values. `cuda.shfl_up_sync` looks *down* the lanes instead (lane `k`
# gets lane `k - delta`), `cuda.shfl_xor_sync(mask, value, lane_mask)` reads lane
# `k ^ lane_mask` (its third argument; the mask still only names the lanes taking part), and
# `cuda.shfl_sync(mask, value, src)` reads one chosen lane. Numba's shuffles move 32- and
# 64-bit ints and floats, and have no `width` argument: a shuffle always spans a warp.

# %% [markdown]
# ## Five steps to a warp's sum
#
# Add what the lane 16 above holds, then 8, 4, 2, 1. After the step with offset 16, lane 0
# holds lanes 0 + 16; after 8, lanes 0 + 8 + 16 + 24; after five steps, all 32. This kernel
# records every lane's value after each step; each lane starts with its own number, so lane 0
# ends with 0 + 1 + ... + 31 = 496:

# %%
@cuda.jit
def warp_sum_steps(levels):
    lane = cuda.threadIdx.x
    value = int32(lane)
    levels[0, lane] = value
    offset, step = 16, 1
    while offset > 0:
        value += cuda.shfl_down_sync(FULL_MASK, value, offset)
        levels[step, lane] = value
        offset //= 2
        step += 1


def sum_steps():
    levels = cuda.device_array((6, 32), np.int32)
    warp_sum_steps[1, 32](levels)
    return levels.copy_to_host()


levels = sum_steps() if ON_GPU else grader.doctor.run(sum_steps)
fig, ax = plt.subplots(figsize=(10, 2.6))
ax.imshow(levels, cmap="Blues", aspect="auto")
for (step, lane), v in np.ndenumerate(levels):
    ax.text(lane, step, v, ha="center", va="center", fontsize=5)
ax.set_yticks(range(6), ["start", "+16", "+8", "+4", "+2", "+1"])
ax.set_xlabel("lane")
ax.set_title("values each lane holds after each shuffle: only lane 0 ends with the sum, 496")
plt.show()

# %% [markdown]
# Only lane 0 holds the warp's sum; every other lane holds a partial sum nobody reads (the
# lanes near the top, with no lane `offset` above them, even added their own value back).
# So the lane that stores the sum must be lane 0. There is no barrier between steps: a
# shuffle waits for the lanes it names by itself.

# %% [markdown]
# ## The mask is a promise
#
# `mask` names the lanes that take part, and CUDA holds you to it: every calling lane must be
# in the mask, and every lane the mask names must reach the *same* shuffle. A lane that has
# `return`ed, or waits somewhere else, breaks the promise, and a lane reading its value gets
# garbage (or the warp hangs). The usual way to break it is an early exit:

# %%
@cuda.jit
def sum_with_early_exit(x, out):
    i = cuda.grid(1)
    if i >= x.size:
        return  # lanes past the end leave...
    value = x[i]
    offset = 16
    while offset > 0:  # ...but the others still read them
        value += cuda.shfl_down_sync(FULL_MASK, value, offset)
        offset //= 2
    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.add(out, 0, value)


def early_exit(x):
    out = cuda.to_device(np.zeros(1, np.float32))
    sum_with_early_exit[1, 32](cuda.to_device(x), out)
    return out.copy_to_host()[0]


x = np.ones(20, np.float32)  # 20 lanes hold a value, 12 have left
try:
    total = early_exit(x) if ON_GPU else grader.doctor.run(early_exit, x)
    print(f"sum = {total} (should be 20: lanes 0-15 read lanes that had gone)")
except grader.doctor.KernelDoctorError as problem:
    print(problem)

# %% [markdown]
# On a GPU this prints *some* number; the kernel doctor, which runs warps lane by lane, tells
# you which lane read which, and why. The fix is the one from reduce_sum: no early `return`;
# lanes past the end take part with 0.

# %% [markdown]
# ## From warps to a block
#
# A block of 256 threads is 8 warps. Each warp sums its 32 values with five shuffles; lane 0
# of each warp writes its warp's sum to a shared array of 8 slots (*one shared value per
# warp*, where the tree of reduce_sum used 256); one `cuda.syncthreads()`; then warp 0 reads
# the 8 sums (0 in its lanes 8–31), shuffles them together, and its lane 0 does the block's
# one `cuda.atomic.add`. One barrier instead of eight, and 8 shared writes instead of 256.

# %% [markdown]
# ## Your turn: `warp_reduce`
#
# Fill in the shuffle in `warp_sum`, lane 0's write of its warp's sum, warp 0's read of the
# per-warp sums, and the atomic. `out` arrives zeroed.

# %% [exercise] warp_reduce

# %% [check] warp_reduce

# %% [markdown]
# **If it says "Not yet":** *race* with a message that starts "Undefined behaviour" means a
# shuffle some lanes do not reach (inside an `if`, after a `return`), a mask that leaves out a
# lane that calls it, or a shuffle reading a lane that has left or does not exist (a block
# that is not whole warps): a GPU may give any value or hang, so the check names the rule, the
# lane and the line instead of a value. *Wrong result* with every sum doubled means an offset
# of 32 (a shuffle keeps only the offset's low 5 bits, so 32 reads the lane itself); "lane 0
# kept doubling its own value" means `shfl_up_sync` (the sum ends in lane 31, not lane 0):
# use `shfl_down_sync`; a sum of 0 means a lane other than lane 0 stored it.

# %% [markdown]
# ## Going further: votes
#
# Shuffles move values; *votes* combine one yes/no per lane. `cuda.ballot_sync(mask, p)` gives
# every lane a 32-bit word whose bit `k` is lane `k`'s `p`; `cuda.popc` counts its ones. One
# instruction counts a warp's positive values:

# %%
@cuda.jit
def count_positive(x, counts):
    i = cuda.grid(1)
    votes = cuda.ballot_sync(FULL_MASK, x[i] > 0)
    if cuda.threadIdx.x % 32 == 0:
        counts[i // 32] = cuda.popc(votes)


def positives(x):
    counts = cuda.device_array(x.size // 32, np.int32)
    count_positive[x.size // 32, 32](cuda.to_device(x), counts)
    return counts.copy_to_host()


x = np.random.default_rng(1).standard_normal(128).astype(np.float32)
print("per warp:", positives(x) if ON_GPU else grader.doctor.run(positives, x))
print("NumPy:   ", (x.reshape(4, 32) > 0).sum(axis=1))

# %% [markdown]
# ## Recap
#
# - A warp is 32 lanes; `lane = threadIdx.x % 32`, `warp = threadIdx.x // 32`.
# - `cuda.shfl_down_sync(mask, value, delta)` reads another lane's register; five of them
#   sum a warp. No shared memory and no barrier.
# - The mask names every lane that calls, and every named lane must call: no shuffle inside
#   an `if` some lanes skip, no early `return` before it.
# - A block sum: shuffles per warp, one shared value per warp, one barrier, one atomic.
#
# **Next:** [13 · Scan](13-scan-prefix-sums.ipynb): prefix sums, where every element needs
# the sum of everything before it, across blocks.

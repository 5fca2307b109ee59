# Source of curriculum/06-reduce-sum-shared-memory-atomics.ipynb — edit here, then run `python curriculum/build.py`.

# %% [markdown]
# # 06 · Reduce sum: races, atomics and shared memory
#
# **In this notebook you will**
#
# - see why many threads adding into one number give a different wrong answer each run
#   (a *race*);
# - fix it with an *atomic* operation, and see why that alone is slow;
# - use *shared memory* and `cuda.syncthreads()` to add up a block's values in a tree;
# - write `reduce_sum`: a tree per block, one atomic per block.

# %% tags=["setup"]
import grader  # first, before numba: it picks the GPU, or the simulator when there is none
import numpy as np
from numba import cuda, float32

print(f"Running on: {grader.BACKEND}")

# %% [markdown]
# ## Many inputs, one output
#
# Every kernel so far was a *map*: each thread wrote its own element, and no two threads
# wrote the same place. A **reduction** combines many values into one: a sum, a maximum, a
# count. Now thousands of threads want to contribute to the same output.
#
# The obvious kernel, `out[0] += x[i]` in every thread, is wrong. `+=` is three steps: *load*
# `out[0]`, *add*, *store*. Two threads that interleave them lose an update:
#
# | time | thread A | thread B | `out[0]` |
# | --- | --- | --- | --- |
# | 1 | loads 0 | | 0 |
# | 2 | | loads 0 | 0 |
# | 3 | stores 0 + 5 | | 5 |
# | 4 | | stores 0 + 7 | **7**, not 12 |

# %% [markdown]
# ## Worked example: a race, in slow motion
#
# On a GPU, thousands of threads interleave like this all the time. Simulated threads take
# turns and rarely collide, so to show you the race here we widen the gap between load and
# store: every thread loads, then waits for the others (`cuda.syncthreads()`, explained
# below), then stores. Eight threads add 1 + 2 + … + 8, which should be 36:

# %%
@cuda.jit
def racy_sum(x, out):
    i = cuda.grid(1)
    seen = out[0]  # 1. load
    cuda.syncthreads()  # (every thread has loaded the old value by now)
    out[0] = seen + x[i]  # 2.-3. add and store: each thread overwrites the others


values = np.arange(1, 9, dtype=np.float32)
for run in range(5):
    out = cuda.to_device(np.zeros(1, np.float32))
    racy_sum[1, 8](cuda.to_device(values), out)
    print(f"run {run}: {out.copy_to_host()[0]:4.0f}   (right answer: {values.sum():.0f})")

# %% [markdown]
# Whichever thread stores last wins, and which one that is depends on timing, so the answer
# changes from run to run. That is the signature of a race: **the same input gives
# different answers**. The grader uses it: when a case is wrong it runs it twice more, and if
# the answers differ the verdict is `race`. On the simulator, races usually stay hidden, so a
# race-free result there is no proof; on a GPU they show up almost every time.

# %% [markdown]
# ## Fix 1: atomics
#
# `cuda.atomic.add(array, index, value)` does the load, add and store as one indivisible
# operation: no other thread can slip in between.

# %%
@cuda.jit
def atomic_sum(x, out):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(out, 0, x[i])


for run in range(3):
    out = cuda.to_device(np.zeros(1, np.float32))
    atomic_sum[1, 8](cuda.to_device(values), out)
    print(f"run {run}: {out.copy_to_host()[0]:4.0f}")

# %% [markdown]
# Correct every time. But every atomic on the same address waits for the one before it: `n`
# additions, one after another, by a machine built to do thousands at once. This is exactly
# the *baseline* the GPU check compares your `reduce_sum` with.

# %% [markdown]
# ## Shared memory and `syncthreads`
#
# The fix is to add up most of the numbers *inside each block* first, and let only one
# thread per block touch `out[0]`. Blocks have two tools for working together:
#
# - **shared memory**: a small (tens of KB) scratchpad on the multiprocessor, as fast as a
#   cache, visible to all threads of *one block* and to no other. It lives only as long as
#   the block. Declare it in the kernel with a size fixed when the kernel compiles:
#   `partial = cuda.shared.array(256, float32)`.
# - **`cuda.syncthreads()`**: a barrier. No thread of the block continues until *every*
#   thread of the block has arrived. After it, everything written to shared memory before it
#   is visible to the whole block. Every thread must reach every barrier: a `syncthreads()`
#   inside an `if` that only some threads take is undefined behaviour, and the block may
#   hang or compute garbage.

# %% [markdown]
# ## A tree inside a block
#
# With one value per thread in shared memory, the block adds pairs, then pairs of pairs,
# halving the number of partial sums at each step, with a barrier between steps so nobody
# reads a slot before it is written. 256 values take 8 steps instead of 255.
#
# **Worked example.** Here is one way to pair them up: at step `s`, thread `t` adds the slot
# `s` places to its right, if `t` is a multiple of `2s`. Eight threads, and we record shared
# memory after every step:

# %%
DEMO_THREADS = 8  # a constant: shared-array sizes must be known when the kernel compiles


@cuda.jit
def neighbour_tree(x, levels):
    partial = cuda.shared.array(DEMO_THREADS, float32)
    t = cuda.threadIdx.x
    partial[t] = x[t]
    cuda.syncthreads()
    levels[0, t] = partial[t]
    stride, step = 1, 1
    while stride < DEMO_THREADS:
        if t % (2 * stride) == 0:
            partial[t] += partial[t + stride]
        cuda.syncthreads()  # outside the if: every thread reaches it
        levels[step, t] = partial[t]
        stride *= 2
        step += 1


levels = cuda.device_array((4, DEMO_THREADS), np.float32)
neighbour_tree[1, DEMO_THREADS](cuda.to_device(values), levels)
for step, row in enumerate(levels.copy_to_host()):
    print(f"after step {step}: {row.astype(int)}")

# %% [markdown]
# Slot 0 ends with 36. It works, but look at who works: at step 1 threads 0, 2, 4, 6; at
# step 2 threads 0 and 4; then thread 0 alone. In a block of 256 threads, every warp keeps a
# few busy threads scattered among idle ones, and a warp runs as long as its busiest thread.
#
# The exercise folds the array **in half** instead: at each step the first `stride` threads
# add the slot `stride` places to their right, with `stride` = 128, 64, …, 1. The busy threads
# are always the first ones, so whole warps finish and go idle together. Same number of
# additions, fewer warps kept running.

# %% [markdown]
# ## Your turn: `reduce_sum`
#
# Three parts, as the docstring says: load one value per thread into shared memory (0 past
# the end of `x`); fold the tree in half with a barrier after each step; then thread 0 adds
# the block's total to `out[0]` with one atomic. `out` arrives zeroed.

# %% [exercise] reduce_sum

# %% [check] reduce_sum

# %% [markdown]
# **If it says "Not yet":** *wrong result* with a value far too small usually means a
# missing `cuda.syncthreads()` (on a GPU you may see *race*); *exception* pointing at
# `partial[tid + stride]` means a thread reads past the shared array (is your `if tid <
# stride` there?); a total that is a multiple of the right one means more than one thread per
# block adds to `out[0]`.

# %% [markdown]
# ## Why the check allows a small error
#
# Float32 addition is not associative: adding the same numbers in another order rounds
# differently. Your tree adds in a different order from NumPy, so it gets a slightly
# different, equally valid, answer. (A tree is also one of the *more* accurate orders: each
# value goes through only log2(n) additions.) The grader's tolerance grows with the number of
# values summed.

# %%
x = np.random.default_rng(0).standard_normal(100_000).astype(np.float32)
one_by_one = np.cumsum(x, dtype=np.float32)[-1]  # left to right, one value at a time
print(f"float32, NumPy's sum (pairs of pairs): {x.sum():.4f}")
print(f"float32, one by one, left to right:    {one_by_one:.4f}")
print(f"float32, one by one, smallest first:   {np.cumsum(np.sort(x), dtype=np.float32)[-1]:.4f}")
print(f"float64 (as good as exact here):       {x.astype(np.float64).sum():.4f}")

# %% [markdown]
# ## Recap
#
# - Threads that load, modify and store the same address race: the answer changes from run
#   to run, and on the simulator it may look right.
# - `cuda.atomic.add` makes the update indivisible, but atomics on one address queue up.
# - Shared memory is a fast scratchpad per block; `cuda.syncthreads()` makes every thread of
#   the block wait, and every thread must reach it.
# - A reduction: a tree in shared memory per block, then one atomic per block.
#
# **Next:** [07 · Histogram](07-histogram-privatisation.ipynb): atomics on many addresses,
# and how to keep them from colliding.

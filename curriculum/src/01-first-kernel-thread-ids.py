# Source of curriculum/01-first-kernel-thread-ids.ipynb — edit here, then run `python curriculum/build.py`.

# %% [markdown]
# # 01 · Your first kernel: every thread knows who it is
#
# **In this notebook you will**
#
# - write a kernel with `@cuda.jit` and launch it with `kernel[blocks, threads_per_block](...)`;
# - use `cuda.threadIdx.x`, `cuda.blockIdx.x` and `cuda.blockDim.x` to give each thread its
#   own *global index*;
# - work out how many blocks a launch needs, and why the last block needs a *bounds guard*;
# - pass your first check: `thread_ids`.

# %% tags=["setup"]
import grader  # first, before numba: it picks the GPU, or the simulator when there is none
import numpy as np
from numba import cuda

from grader.notebook import widgets

print(f"Running on: {grader.BACKEND}")

# %% [markdown]
# ## A kernel is a function every thread runs
#
# `@cuda.jit` turns a Python function into a **kernel**. A launch runs it once in every
# thread of the grid, all with the same arguments. A kernel returns nothing: the only way it
# can hand back a result is to write into an array.
#
# If every thread runs the same code with the same arguments, how do they do different work?
# Each thread can read a few built-in numbers:
#
# | inside the kernel | means | ranges over |
# | --- | --- | --- |
# | `cuda.threadIdx.x` | my number inside my block | 0 … threads per block − 1 |
# | `cuda.blockIdx.x` | my block's number in the grid | 0 … blocks − 1 |
# | `cuda.blockDim.x` | how many threads a block has | (the same for every thread) |
# | `cuda.gridDim.x` | how many blocks the grid has | (the same for every thread) |

# %% [markdown]
# ## Worked example: who am I?
#
# This kernel makes each thread write down its block number and its thread number, at the
# position of its *global index* (the next cell explains the formula). We launch 3 blocks of
# 4 threads: 12 threads, 12 elements.

# %%
@cuda.jit
def who_am_i(block_of, thread_of):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x  # my global index
    block_of[i] = cuda.blockIdx.x
    thread_of[i] = cuda.threadIdx.x


demo_blocks, demo_threads = 3, 4
block_of = cuda.device_array(demo_blocks * demo_threads, np.int32)
thread_of = cuda.device_array(demo_blocks * demo_threads, np.int32)
who_am_i[demo_blocks, demo_threads](block_of, thread_of)

print("global index i :", np.arange(demo_blocks * demo_threads))
print("blockIdx.x     :", block_of.copy_to_host())
print("threadIdx.x    :", thread_of.copy_to_host())

# %% [markdown]
# `threadIdx.x` starts again at 0 in every block, so on its own it does not tell threads of
# different blocks apart. The **global index** does:
#
# ```python
# i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
# ```
#
# Block 0 holds threads 0 … 3, block 1 holds 4 … 7, block 2 holds 8 … 11: every thread gets a
# different `i`, and together they cover 0 … 11 with no gap. `cuda.grid(1)` computes the same
# number in one call; you will use it from the next notebook on.
#
# On a GPU, Numba may add a `NumbaPerformanceWarning` about "low occupancy": it notices that
# 3 blocks leave almost all of the GPU's multiprocessors idle. True, and harmless for a demo
# of 12 threads; for real work, launch thousands of threads or more.

# %% [markdown]
# ## More elements than fit in whole blocks
#
# Blocks all have the same size, but your data rarely comes in multiples of it. With 20
# elements and 8 threads per block you need 3 blocks, 24 threads, and 4 of them have nothing
# to do. Try the sliders: change `n` and the block size, and tick *floor division* to see the
# most common bug of all.

# %%
widgets.grid_explorer(n=20, threads_per_block=8)

# %% [markdown]
# The number of blocks is `n / threads_per_block` **rounded up**. In integer arithmetic:
#
# ```python
# blocks = (n + threads_per_block - 1) // threads_per_block
# ```
#
# `n // threads_per_block` rounds *down* and leaves the last elements without a thread.

# %%
threads_per_block = 128
for n in (1, 7, 128, 255, 257, 1000):
    blocks = (n + threads_per_block - 1) // threads_per_block
    idle = blocks * threads_per_block - n
    print(f"n = {n:4}: {blocks} block(s); the last one has {idle:3} idle thread(s)")

# %% [markdown]
# ## The bounds guard
#
# The idle threads of the last block still run the kernel. If they write `out[i]` anyway,
# they write past the end of the array. Here is a kernel without a guard, launched with
# 3 blocks of 8 threads on 20 elements:

# %%
@cuda.jit
def unguarded(out):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    out[i] = i  # no guard: threads 20 ... 23 write past the end of out


out = cuda.device_array(20, np.int32)
if grader.BACKEND == "simulator":
    try:
        unguarded[3, 8](out)
    except IndexError as err:
        print("The simulator stopped it:", err)
else:
    print("Not run on a GPU: nothing would stop it, and it could overwrite other data.")

# %% [markdown]
# `tid` is the thread inside its block and `ctaid` the block ("cooperative thread array" is
# CUDA's formal name for a block). The simulator checks every index. **A GPU does not**: the
# write simply lands in whatever memory follows the array, perhaps another array of yours,
# and nothing tells you. That is why every kernel that might have spare threads starts with
# a guard:
#
# ```python
# if i < out.size:
#     out[i] = ...
# ```
#
# The grader surrounds every output with *canaries* (marked values just before and after
# it), so on a GPU too a write past the end is reported as `out_of_bounds`.

# %% [markdown]
# ## Device arrays start with garbage
#
# `cuda.device_array(n, dtype)` reserves memory on the device without clearing it: whatever
# was there before is still there. So a kernel must write *every* element of its output. The
# grader fills outputs with a special "poison" value before your kernel runs, and reports any
# element still holding it as `unwritten_output`.

# %% [markdown]
# ## Your turn: `thread_ids`
#
# Make every thread write its own global index: `out[i] = i` for every `i` in `0 … n-1`.
# Two `# TODO`s in the kernel (the index and the guarded write) and one in `launch` (the
# number of blocks). Edit the cell, run it, then run the check below it.

# %% [exercise] thread_ids

# %% [markdown]
# Run the check. It calls your `launch` on sizes from 1 to 2053 elements. As shipped, the
# kernel writes only a few elements, so you will see *Not yet* with a hint; when everything
# is right it says **Passed**. On the simulator the speed line says *not measured*; on a
# GPU a passing kernel is also timed.

# %% [check] thread_ids

# %% [markdown]
# **If it says "Not yet":**
#
# - *unwritten output*: not enough blocks. Round up.
# - *wrong result*: the index. `threadIdx.x` alone repeats in every block.
# - *out of bounds*: the guard is missing, or uses `<=`. The last element is `out[n - 1]`.
#
# ## Recap
#
# - A kernel runs in every thread; it tells threads apart by `blockIdx.x`, `blockDim.x`
#   and `threadIdx.x`, combined into the global index `i`.
# - Launch `ceil(n / threads_per_block)` blocks, and guard with `if i < n` so the spare
#   threads of the last block do nothing.
# - Device arrays arrive uninitialised: write every element.
#
# **Next:** [02 · Vector add](02-vector-add-launch-and-timing.ipynb): real inputs, choosing a
# launch configuration, and timing a kernel the right way.

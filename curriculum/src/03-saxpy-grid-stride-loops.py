# Source of curriculum/03-saxpy-grid-stride-loops.ipynb — edit here, then run `python curriculum/build.py`.

# %% [markdown]
# # 03 · SAXPY: grid-stride loops
#
# **In this notebook you will**
#
# - size a grid for the GPU instead of for the data;
# - write a *grid-stride loop*, so that a fixed grid covers any number of elements;
# - see why the loop hands out elements in a stride rather than in chunks;
# - pass scalars to a kernel without changing its precision.

# %% tags=["setup"]
import grader  # first, before numba: it picks the GPU, or the simulator when there is none
import numpy as np
from numba import cuda

print(f"Running on: {grader.BACKEND}")

# %% [markdown]
# ## One thread per element is not the only way
#
# So far the data chose the grid: `n` elements, `n` threads (rounded up to whole blocks).
# That is simple, but for a billion elements it launches a billion threads, each doing one
# addition and then retiring. Starting a block costs time too, and a GPU can only *run* a
# few hundred thousand threads at once anyway (a multiprocessor holds about 2,000).
#
# The alternative: launch a grid sized for the **GPU** (a few blocks per multiprocessor) and
# let each thread handle several elements. The pattern that does it is the grid-stride loop:
#
# ```python
# start = cuda.grid(1)       # my global index
# stride = cuda.gridsize(1)  # how many threads the whole grid has
# for i in range(start, n, stride):
#     ...                    # work on element i
# ```

# %% [markdown]
# ## Worked example: who does which element?
#
# A grid of 2 blocks × 4 threads = 8 threads, and 20 elements. Each thread records its own
# number in every element it handles.

# %%
@cuda.jit
def who_does_what(owner):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, owner.size, stride):
        owner[i] = start  # thread `start` handled element i


owner = cuda.device_array(20, np.int32)
who_does_what[2, 4](owner)
owner = owner.copy_to_host()

print("element:", " ".join(f"{i:2}" for i in range(20)))
print("thread: ", " ".join(f"{t:2}" for t in owner))
for t in range(8):
    print(f"thread {t} handled elements {np.flatnonzero(owner == t).tolist()}")

# %% [markdown]
# Read it row by row: in the first round threads 0 … 7 take elements 0 … 7; then the whole
# grid moves forward by `stride` = 8 and they take 8 … 15; then 16 … 19, and threads 4 … 7
# find their next index past the end and stop. The loop's `i < n` *is* the bounds guard.

# %% [markdown]
# ## Why a stride, not a chunk?
#
# On a CPU you would give each thread a contiguous chunk: thread 0 does elements 0 … 2,
# thread 1 does 3 … 5, and so on. On a GPU that is the wrong choice. Remember that the 32
# threads of a warp execute each instruction *together*: what matters is which addresses a
# warp touches **at the same moment**.

# %%
n_elems, n_threads = 24, 8
chunk = n_elems // n_threads
for step in range(3):
    strided = [t + step * n_threads for t in range(n_threads)]
    chunked = [t * chunk + step for t in range(n_threads)]
    print(f"step {step}: grid-stride threads 0-7 touch {strided}")
    print(f"        chunked     threads 0-7 touch {chunked}")

# %% [markdown]
# With the stride, the threads touch neighbouring elements at every step, so the hardware
# fetches them in a few wide memory transactions: the access is **coalesced** (notebook 04
# draws it). With chunks, neighbouring threads are `chunk` elements apart and every thread
# needs its own transaction.

# %% [markdown]
# ## The loop works for any grid
#
# The same kernel is correct whatever grid you launch it with: one thread, one block, or
# more threads than elements. Here every element counts how often it was visited:

# %%
@cuda.jit
def visit_count(hits):
    for i in range(cuda.grid(1), hits.size, cuda.gridsize(1)):
        hits[i] += 1  # no two threads share an i, so this is safe


for grid, block in ((1, 1), (1, 32), (3, 32), (8, 32)):
    hits = cuda.to_device(np.zeros(100, np.int32))
    visit_count[grid, block](hits)
    counts = hits.copy_to_host()
    print(f"{grid} block(s) of {block:2} threads: every element visited exactly once: "
          f"{bool((counts == 1).all())}")

# %% [markdown]
# ## Scalars keep their type
#
# SAXPY takes a scalar `alpha`. Numba compiles a kernel for the *types* of its arguments. A
# Python `2.0` is a float64, so `alpha * x[i]` would be computed in double precision, which
# consumer GPUs run 32 to 64 times slower than single precision. Pass `np.float32(2.0)`
# instead; the grader does.

# %% [markdown]
# ## Your turn: `saxpy`
#
# Write `out = alpha * x + y` with a grid-stride loop. Keep `launch` as it is: it launches a
# quarter as many threads as elements (and at most 4096 blocks), so the starter's single
# `if i < out.size` leaves three quarters of `out` unwritten.

# %% [exercise] saxpy

# %% [check] saxpy

# %% [markdown]
# On the simulator a pass is a pass. On a GPU the check also compares your speed with a
# baseline that launches one thread per element in blocks of 64. A grid-stride loop is
# rarely dramatically faster for such a simple kernel, but it is never slower, it is the
# standard shape of production kernels, and it keeps working when `n` is larger than the
# biggest grid you can launch.

# %% [markdown]
# ## Recap
#
# - Size the grid for the GPU, and let a grid-stride loop cover the data:
#   `for i in range(cuda.grid(1), n, cuda.gridsize(1))`.
# - The stride keeps a warp's accesses on neighbouring elements at every step (coalesced);
#   chunks scatter them.
# - The loop is correct for any grid and any `n`; its `i < n` is the bounds guard.
# - Pass scalars as `np.float32` to stay in single precision.
#
# **Next:** [04 · RGB to gray](04-rgb-to-gray-2d-grids-coalescing.ipynb): two-dimensional grids,
# and memory coalescing in pictures.

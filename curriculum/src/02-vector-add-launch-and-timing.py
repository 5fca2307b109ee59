# Source of curriculum/02-vector-add-launch-and-timing.ipynb — edit here, then run `python curriculum/build.py`.

# %% [markdown]
# # 02 · Vector add: launch configuration, and timing a kernel the right way
#
# **In this notebook you will**
#
# - copy NumPy arrays to the device and results back;
# - choose a launch configuration: how many threads per block, how many blocks;
# - write `vector_add`, the "hello world" of GPU computing;
# - time a kernel correctly (CUDA events, synchronisation, a warm-up call), and learn why the
#   first call is slow and why timings on the simulator mean nothing.

# %% tags=["setup"]
import grader  # first, before numba: it picks the GPU, or the simulator when there is none
import time

import numpy as np
from numba import cuda

print(f"Running on: {grader.BACKEND}")

# %% [markdown]
# ## `cuda.grid(1)`: the global index in one call
#
# `cuda.grid(1)` returns `blockIdx.x * blockDim.x + threadIdx.x`, the global index from
# notebook 01, and `cuda.gridsize(1)` returns the total number of threads in the grid
# (`gridDim.x * blockDim.x`). The `1` says the grid is one-dimensional; notebook 04 uses 2.

# %% [markdown]
# ## Choosing threads per block
#
# Any block size from 1 to 1024 works, but some work much better:
#
# - **a multiple of 32.** The hardware runs threads in warps of 32; a block of 100 threads
#   occupies 4 warps, and the last one runs with 28 of its 32 lanes idle.
# - **128 or 256 is a good default.** A multiprocessor holds a limited number of blocks at
#   once (16 to 32 on recent GPUs), so tiny blocks leave it half empty. Very large blocks are
#   fine but give the scheduler fewer, bigger pieces to juggle.
#
# Then the number of blocks follows from the data: `ceil(n / threads_per_block)`.

# %%
def blocks_for(n, threads_per_block):
    return (n + threads_per_block - 1) // threads_per_block


for tpb in (32, 128, 256, 1024):
    print(f"n = 1,000,000 with {tpb:4} threads per block: {blocks_for(1_000_000, tpb):6,} blocks")

# %% [markdown]
# Those are ordinary numbers of blocks for a GPU: it runs a few thousand threads per
# multiprocessor at a time and starts new blocks as old ones finish.

# %% [markdown]
# ## Worked example: clamp a vector
#
# The whole round trip with real data: make the inputs with NumPy on the host, copy them to
# the device, launch, copy the answer back and compare it with NumPy.

# %%
@cuda.jit
def clamp_kernel(x, low, high, out):
    i = cuda.grid(1)
    if i < out.size:  # the bounds guard
        out[i] = min(max(x[i], low), high)


def clamp(x, tpb=128):
    d_x = cuda.to_device(x)  # host -> device
    d_out = cuda.device_array(x.size, np.float32)  # uninitialised, on the device
    clamp_kernel[blocks_for(x.size, tpb), tpb](d_x, np.float32(-1), np.float32(1), d_out)
    return d_out.copy_to_host()  # device -> host (waits for the kernel)


n = 1_000_000
x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
# On a GPU, call it; without one, run it on the kernel doctor (about a second for a million).
result = clamp(x) if grader.BACKEND == "gpu" else grader.doctor.run(clamp, x)

print("matches NumPy:", np.array_equal(result, np.clip(x, -1, 1)))

# %% [markdown]
# Two details worth copying:
#
# - `low` and `high` are passed as `np.float32`. A plain Python `1.0` would arrive in the
#   kernel as a float64, and the arithmetic would quietly be done in double precision,
#   which many GPUs run 32 to 64 times slower than float32.
# - Without a GPU, `grader.doctor.run(clamp, x)` calls `clamp(x)` with its kernel on the
#   kernel doctor, the CPU executor behind the checks. A million elements take about a
#   second there; on Numba's simulator, where each of the million threads would be a real
#   Python thread, they would take minutes. On a GPU a million takes microseconds.

# %% [markdown]
# ## Your turn: `vector_add`
#
# Write `c[i] = a[i] + b[i]`: one TODO in the kernel (the guarded addition) and one in
# `launch` (the number of blocks). The grader hands `launch` arrays that are already on the
# device, so `launch` only picks the grid and launches.

# %% [exercise] vector_add

# %% [check] vector_add

# %% [markdown]
# On the simulator you see the verdict and *Speed: not measured*. On a GPU, a passing kernel
# is timed against a baseline (one thread per element, blocks of 64) and you see its speedup
# and the bandwidth it reached. Vector addition does one addition per 12 bytes moved, so its
# speed is set entirely by memory bandwidth.

# %% [markdown]
# ## Timing a kernel the right way
#
# When you want to know whether a change made a kernel faster, you must time it, and GPU
# timing has three traps:
#
# 1. **A launch is asynchronous.** `kernel[...](...)` queues the work and returns at once, so
#    `time.perf_counter()` around a launch measures how long it took to *queue*, not to run.
#    Wait for the GPU with `cuda.synchronize()`, or better, use CUDA *events*: time stamps the
#    GPU itself records when it reaches them in its queue.
# 2. **The first call compiles.** Numba compiles a kernel for the GPU the first time it is
#    called with a new combination of argument types. That takes a few hundred milliseconds.
#    Always make one warm-up call before timing.
# 3. **One measurement is noise.** Repeat, and report the median.
#
# Here is the method as a function you can reuse:

# %%
def time_with_events(run, repeats=5):
    """Milliseconds of GPU time for each of `repeats` calls of run(), after a warm-up call."""
    run()  # warm-up: the first call compiles the kernel
    cuda.synchronize()  # wait until the GPU has finished everything queued so far
    times = []
    for _ in range(repeats):
        start, end = cuda.event(), cuda.event()
        start.record()  # a time stamp, queued before the kernel
        run()
        end.record()  # ... and one after it
        end.synchronize()  # wait until the GPU has reached `end`
        times.append(start.elapsed_time(end))  # milliseconds between the two stamps
    return times

# %% [markdown]
# Now we time your `launch`. On a GPU we use 16 million elements, enough for the time to be
# dominated by moving data, not by starting the kernel. On the simulator we use 256 elements
# and print no number: a simulated thread takes about 0.2 ms, so the figure would only
# measure Python, not your kernel.

# %%
n = 1 << 24 if grader.BACKEND == "gpu" else 256
rng = np.random.default_rng(1)
a = cuda.to_device(rng.standard_normal(n).astype(np.float32))
b = cuda.to_device(rng.standard_normal(n).astype(np.float32))
c = cuda.device_array(n, np.float32)

times = time_with_events(lambda: launch(a, b, c))
if grader.BACKEND == "gpu":
    median_ms = float(np.median(times))
    gb_per_s = 12 * n / (median_ms / 1e3) / 1e9  # read a and b, write c: 12 bytes each
    print(f"{n:,} elements: median {median_ms:.3f} ms over {len(times)} runs, {gb_per_s:,.0f} GB/s")
else:
    print(f"Timed {len(times)} launches on the simulator; no number shown: it would measure "
          "Python threads, not a GPU.")

# %% [markdown]
# On a GPU, `GB/s` is the figure to compare with the card's memory bandwidth (about
# 3,000–5,000 GB/s on data-centre cards, 200–1,000 GB/s on gaming cards). A correct
# `vector_add` reaches most of it. If you ran this before passing the check, the number is
# meaningless too: the starter launches a single block.

# %% [markdown]
# ## Why the first call is slow, and what `perf_counter` alone sees
#
# A fresh kernel, timed with the host's clock: its first call, a second call, and a call
# *without* waiting for the GPU.

# %%
@cuda.jit
def fresh_add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


grid = blocks_for(n, 256)

t0 = time.perf_counter()
fresh_add[grid, 256](a, b, c)  # compiles, then runs
cuda.synchronize()
first = time.perf_counter() - t0

t0 = time.perf_counter()
fresh_add[grid, 256](a, b, c)  # already compiled
cuda.synchronize()
second = time.perf_counter() - t0

t0 = time.perf_counter()
fresh_add[grid, 256](a, b, c)
queued = time.perf_counter() - t0  # no synchronize: only the time to queue the launch
cuda.synchronize()

if grader.BACKEND == "gpu":
    print(f"first call  {first * 1e3:8.2f} ms  (compiles the kernel, then runs it)")
    print(f"second call {second * 1e3:8.2f} ms  (runs it)")
    print(f"no sync     {queued * 1e3:8.2f} ms  (only queues it: not the kernel's time)")
else:
    print("On the simulator nothing is compiled (the kernel runs as Python), so the first call "
          "is no slower; on a GPU it typically takes a few hundred ms longer.")

# %% [markdown]
# ## Recap
#
# - `cuda.grid(1)` is the global index; `blocks = ceil(n / threads_per_block)`; guard with
#   `if i < n`.
# - Use a multiple of 32 threads per block; 128 or 256 is a good default.
# - Pass scalars as `np.float32` to keep float32 arithmetic.
# - Time with events after a warm-up call, repeat, take the median; on the simulator, don't
#   time at all.
#
# **Next:** [03 · SAXPY](03-saxpy-grid-stride-loops.ipynb): a grid sized for the GPU instead of
# the data, and the grid-stride loop.

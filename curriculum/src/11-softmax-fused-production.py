# Source of curriculum/11-softmax-fused-production.ipynb — edit here, then run `python curriculum/build.py`.

# %% [markdown]
# # 11 · Fused softmax, and making kernels production-ready
#
# **In this notebook you will**
#
# - compute softmax without overflowing, by subtracting the row maximum;
# - *fuse* a chain of kernels into one, and count the memory traffic that saves;
# - reduce within a block twice (a maximum, then a sum) with a block-stride loop;
# - write `softmax_fused`;
# - then make a kernel production-ready: test it against an oracle on awkward sizes, guard
#   its entry point against bad input, and measure instead of guessing.

# %% tags=["setup"]
import grader  # first, before numba: it picks the GPU, or the simulator when there is none
import numpy as np
from numba import cuda

from grader.notebook import widgets

print(f"Running on: {grader.BACKEND}")

# %% [markdown]
# ## Softmax, and why the naive formula breaks
#
# Softmax turns a row of scores into probabilities: `softmax(x)_c = exp(x_c) / Σ_j exp(x_j)`.
# It sits at the end of every classifier and inside every attention layer.
#
# In float32, `exp(x)` overflows to infinity as soon as `x > 88.7`, and `inf / inf` is NaN.
# Subtracting the row's maximum `m` first changes nothing mathematically (the factor
# `exp(-m)` cancels) but makes every exponent `≤ 0`, so every `exp` is between 0 and 1:

# %%
row = np.array([90.0, 91.0, 92.0], np.float32)
with np.errstate(over="ignore", invalid="ignore"):  # silence NumPy's overflow warnings
    naive = np.exp(row) / np.exp(row).sum()
safe = np.exp(row - row.max()) / np.exp(row - row.max()).sum()
print("naive:", naive)
print("safe: ", safe, " sum =", safe.sum())

# %% [markdown]
# ## Fusion
#
# Written as separate GPU steps, a safe softmax is four kernels, each a full trip through
# global memory: the row maxima; `t = exp(x - m)` into a temporary array; the row sums of
# `t`; `out = t / sum`. A **fused** kernel does all of it in one launch, keeping the row's
# intermediate values on the chip. Softmax is memory-bound, so the bytes moved are the time:

# %%
passes = {  # bytes moved per element of x, in float32
    "1. row max (read x)": 4,
    "2. t = exp(x - m) (read x, write t)": 8,
    "3. row sum (read t)": 4,
    "4. out = t / sum (read t, write out)": 8,
}
unfused = sum(passes.values())
for step, nbytes in passes.items():
    print(f"{step:40} {nbytes:2} bytes")
print(f"{'unfused, total':40} {unfused:2} bytes per element, plus a temporary array")
print(f"{'fused: read x, write out':40} {8:2} bytes per element -> up to {unfused // 8}x faster")

# %% [markdown]
# (The fused kernel does read each row of `x` more than once, but a row that one block has
# just read is still in the cache, so memory sees it about once.)

# %% [markdown]
# ## One block per row, and a block-stride loop
#
# The exercise gives each row to one block of 128 threads. A row can be longer or shorter
# than the block, so each thread walks the row with a **block-stride loop**, the grid-stride
# loop of notebook 03 within one block: columns `tid`, `tid + 128`, `tid + 256`, …
#
# Worked example with 4 threads on a row of 10 columns:

# %%
@cuda.jit
def who_handles_which_column(owner):
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    for c in range(tid, owner.shape[1], cuda.blockDim.x):  # block-stride loop
        owner[row, c] = tid


owner = cuda.device_array((2, 10), np.int32)
who_handles_which_column[2, 4](owner)  # 2 rows -> 2 blocks of 4 threads
print(owner.copy_to_host())

# %% [markdown]
# Each thread keeps a running maximum (then a running sum) over its columns; then the block
# combines its 128 per-thread values with the shared-memory tree of notebook 06, using
# `max` for the first and `+` for the second. Every thread then reads the result from slot 0.
# Three phases, each separated from the next by barriers.

# %% [markdown]
# ## Your turn: `softmax_fused`

# %% [exercise] softmax_fused

# %% [check] softmax_fused

# %% [markdown]
# **If it says "Not yet":** NaN on the rows with large values means the maximum was not
# subtracted (or not the *row's* maximum); wrong values in rows longer than 128 columns, a
# loop over `tid` alone instead of `tid, tid + 128, …`; values that vary between runs, a
# missing barrier; *unwritten output*, a normalising loop (phase 3) that skips columns.

# %% [markdown]
# # Production-ready kernels
#
# The grader has been checking your kernels for you. Outside this course, you are the
# grader. Four habits make the difference.

# %% [markdown]
# ## 1. Test against an oracle
#
# An **oracle** is a slow, obviously correct computation of the same answer: here, NumPy in
# float64. A test runs the kernel and the oracle on the same inputs and compares them with a
# tolerance that float32 rounding justifies. Two tricks from the grader are worth copying:
# fill the output with NaN before the kernel runs, so an element it never writes cannot pass
# by accident; and return a report instead of raising, so one failure does not hide the rest.

# %%
def softmax_oracle(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_softmax(launch_fn, shapes, seed=0):
    """Run launch_fn on random inputs of each shape; return one line of report per shape."""
    rng = np.random.default_rng(seed)
    report = []
    for rows, cols in shapes:
        x = rng.uniform(-100, 100, (rows, cols)).astype(np.float32)
        d_out = cuda.to_device(np.full((rows, cols), np.nan, np.float32))  # poison
        launch_fn(cuda.to_device(x), d_out)
        got, want = d_out.copy_to_host(), softmax_oracle(x)
        unwritten = int(np.isnan(got).sum())
        error = float(np.nanmax(np.abs(got - want))) if unwritten < got.size else float("nan")
        ok = unwritten == 0 and np.allclose(got, want, rtol=1e-4, atol=1e-7)
        report.append(f"{'ok  ' if ok else 'FAIL'} {rows} x {cols:<4} max error {error:.1e}, "
                      f"{unwritten} unwritten")
    return report

# %% [markdown]
# ## 2. Test the awkward sizes
#
# Bugs live at the edges: a single element, a length one less or one more than the block,
# a prime length that is nobody's multiple, more rows than columns and the reverse. The
# grader's cases are chosen like that; choose yours like that too. Here: one element, a
# prime number of columns, and one column more than the block has threads. Tiny sizes keep
# the test fast on the simulator, where each of these blocks of 128 threads takes about half
# a second; on a GPU, add large sizes too.

# %%
for line in test_softmax(launch, [(1, 1), (3, 7), (1, 129)]):
    print(line)

# %% [markdown]
# ## 3. Guard the entry point
#
# Your kernel assumes a lot: a 2-D, float32, C-contiguous array, at least one row. Users of
# your function will break each assumption. Check them on the host, before launching, and
# say what is wrong in words, because the GPU will not:
#
# - out-of-bounds accesses are not detected on a GPU, they silently corrupt memory. Debug
#   indexing on the simulator (set `NUMBA_ENABLE_CUDASIM=1`, or `ZEROGPU_BACKEND=simulator`
#   here), or run your program under NVIDIA's `compute-sanitizer`;
# - errors inside a kernel are *asynchronous*: they surface at the next synchronising call,
#   often far from their cause. Synchronise at the end of your function, so errors are
#   reported where they happen;
# - a launch with 0 blocks is an error on a GPU (the simulator lets it pass).

# %%
def softmax(x):
    """Row-wise softmax of a 2-D float array, on the GPU. Returns a NumPy float32 array."""
    x = np.asarray(x)
    if x.ndim != 2:
        raise ValueError(f"softmax expects a 2-D array (rows, cols), got {x.ndim}-D")
    if not np.issubdtype(x.dtype, np.floating):
        raise TypeError(f"softmax expects floating-point values, got {x.dtype}")
    if x.shape[1] == 0:
        raise ValueError("softmax of an empty row is undefined")
    out = np.empty(x.shape, np.float32)
    if x.shape[0] == 0:
        return out  # nothing to do: do not launch a grid of 0 blocks
    x = np.ascontiguousarray(x, dtype=np.float32)  # one copy if needed, none otherwise
    d_out = cuda.device_array(x.shape, np.float32)
    launch(cuda.to_device(x), d_out)
    cuda.synchronize()  # surface any kernel error here, not at some later call
    return d_out.copy_to_host()


scores = np.random.default_rng(2).standard_normal((2, 5))  # float64: converted on the way in
print("matches the oracle:",
      np.allclose(softmax(scores), softmax_oracle(scores), rtol=1e-4, atol=1e-7))
print("empty input ->", softmax(np.zeros((0, 5))).shape)
for bad in (np.ones(3), np.ones((2, 2), np.int32), np.ones((2, 0))):
    try:
        softmax(bad)
    except (TypeError, ValueError) as err:
        print(f"{type(err).__name__}: {err}")

# %% [markdown]
# ## 4. Measure instead of guessing
#
# Intuition about GPU speed is wrong surprisingly often (notebook 08's shared tile was
# slower than the plain kernel on an H200). So, for every change:
#
# 1. make it correct first, and keep the oracle test passing;
# 2. time it with CUDA events after a warm-up call, several times, and take the median
#    (notebook 02);
# 3. turn the time into the figure that has a ceiling: GB/s for memory-bound kernels
#    (softmax moves 8 bytes per element), FLOP/s for compute-bound ones, and compare it with
#    the card's limit (notebook 10's roofline);
# 4. compare with a baseline you trust, on the same GPU, with realistic sizes;
# 5. when you need to know *why*, profile: Nsight Compute (`ncu python my_script.py`)
#    reports memory throughput, occupancy and stalls, kernel by kernel.
#
# On a GPU, this cell measures your `launch` on 4096 × 4096 values; on the simulator it
# runs the method on a tiny matrix and prints no number.

# %%
def median_ms(run, repeats=10):
    run()  # warm-up (compiles)
    cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = cuda.event(), cuda.event()
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return float(np.median(times))


rows, cols = (4096, 4096) if grader.BACKEND == "gpu" else (1, 16)
d_x = cuda.to_device(np.random.default_rng(1).standard_normal((rows, cols)).astype(np.float32))
d_out = cuda.device_array((rows, cols), np.float32)
ms = median_ms(lambda: launch(d_x, d_out), repeats=10 if grader.BACKEND == "gpu" else 1)
if grader.BACKEND == "gpu":
    print(f"{rows} x {cols}: {ms:.3f} ms, {8 * rows * cols / (ms / 1e3) / 1e9:,.0f} GB/s")
else:
    print("Simulator: the method ran; no number shown (it would time Python threads).")

# %% [markdown]
# On a GPU the check above did the same, more carefully: interleaved runs against the
# baseline and the target kernel, the L2 cache flushed between runs, sampled outputs checked
# for correctness, and the GB/s compared with this GPU's measured bandwidth.

# %% [markdown]
# Time with data like the data your kernel will get: the values can change the speed. In the
# benchmark's rows that hold a 90, exp(x − 90) falls below float32's smallest normal number
# (about 1.2·10⁻³⁸) for most of the row, and a division whose result is that small (a
# *denormal*) takes a slow path on the GPU. On an H200 (2026-12-02, `python
# bench/softmax_probes.py sign`) a kernel that divides every element by the row's sum took
# 0.56 ms on the benchmark's input and 0.45 ms on the same values negated, where nothing
# underflows; the same kernel computing `inv = 1 / total` once per row and multiplying each
# element by `inv` took 0.33 ms on both.

# %% [markdown]
# ## Where you stand
#
# The ladder below reads the record that every check (a check cell, or `zerogpu check` in a
# terminal) keeps on this computer. A file can be checked from a terminal too, which is how a
# graded hand-in is checked:
#
# ```
# zerogpu check softmax_fused my_softmax.py
# ```

# %%
widgets.progress()

# %% [markdown]
# ## Recap, and the whole course in eight lines
#
# - Subtract the row maximum before `exp`; fuse the softmax passes into one kernel so each
#   byte crosses memory once.
# - Production-ready means: an oracle test, awkward sizes, a guarded entry point, and
#   measurements instead of guesses.
#
# Across the course:
#
# 1. A kernel runs in every thread; the global index picks each thread's data; guard it.
# 2. Size grids with `ceil(n / threads)`, or for the GPU with a grid-stride loop.
# 3. Let the 32 threads of a warp touch neighbouring addresses (coalescing).
# 4. Keep data on the device: the bus is the slowest link.
# 5. Threads that update the same place need atomics, or a tree in shared memory.
# 6. Shared memory makes data reuse explicit: tiles, halos, privatised histograms.
# 7. Arithmetic intensity and the roofline say which limit to attack.
# 8. Correct first, then measure.
#
# **Next:** [12 · Warp shuffles](12-warp-reduce-shuffles.ipynb): warp-level primitives
# (`cuda.shfl_down_sync`) for reductions without shared memory. After that: streams to overlap
# copies with kernels, and libraries (cuBLAS, CuPy, CUTLASS, Triton) for the kernels someone
# has already tuned.

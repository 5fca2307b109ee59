# Source of curriculum/05-moving-data.ipynb — edit here, then run `python curriculum/build.py`.

# %% [markdown]
# # 05 · Moving data between host and device
#
# **In this notebook you will**
#
# - see what copying between host and device costs, compared with the kernel itself;
# - recognise the copies Numba makes for you when you pass NumPy arrays to a kernel;
# - keep data on the device across several kernels;
# - use *pinned* (page-locked) host memory for faster copies;
# - measure all this on a GPU, or, on the simulator, learn the method and the typical figures.
#
# There is no graded exercise in this notebook: its lesson is a habit.

# %% tags=["setup"]
import grader  # first, before numba: it picks the GPU, or the simulator when there is none
import time

import numpy as np
from numba import cuda

print(f"Running on: {grader.BACKEND}")
ON_GPU = grader.BACKEND == "gpu"

# %% [markdown]
# ## The slow link in the middle
#
# ```
#   host RAM  ──── PCIe bus: ~25 GB/s (PCIe 4) to ~50 GB/s (PCIe 5) ────  device memory
#                                                                         ~1,000-5,000 GB/s
# ```
#
# A kernel reads device memory 50 to 200 times faster than data crosses the bus. So for a
# simple kernel such as `vector_add`, copying the inputs over and the result back takes far
# longer than the addition itself. Let's put numbers on it before measuring anything.

# %%
def estimate_ms(nbytes, gb_per_s):
    return nbytes / (gb_per_s * 1e9) * 1e3


n = 1 << 24  # 16 M float32 values, 64 MB per vector
bus, device = 25, 3000  # GB/s: typical PCIe 4 and a data-centre GPU (assumed, not measured)
copy_in = estimate_ms(2 * 4 * n, bus)  # a and b to the device
kernel = estimate_ms(3 * 4 * n, device)  # read a and b, write c, on the device
copy_out = estimate_ms(4 * n, bus)  # c back to the host
total = copy_in + kernel + copy_out
for name, ms in (("copy a, b in", copy_in), ("kernel", kernel), ("copy c out", copy_out)):
    print(f"{name:13} {ms:6.2f} ms  {ms / total:6.1%}")

# %% [markdown]
# With these typical figures the kernel is about 1% of the time: **the transfer dominates**.
# A GPU pays off when data, once on the device, is used many times, or by many kernels in a
# row, before anything comes back.

# %% [markdown]
# ## The copies, explicitly
#
# | call | what it does |
# | --- | --- |
# | `cuda.to_device(host_array)` | allocate on the device and copy host → device |
# | `cuda.device_array(shape, dtype)` | allocate on the device, no copy (contents undefined) |
# | `cuda.device_array_like(array)` | the same, with the shape and dtype of `array` |
# | `d.copy_to_host()` | allocate a NumPy array and copy device → host |
# | `d.copy_to_host(host_array)` | copy into an existing host array |
# | `d.copy_to_device(host_array)` | copy into an existing device array |

# %%
x = np.arange(6, dtype=np.float32)
d_x = cuda.to_device(x)
print(type(x).__name__, "->", type(d_x).__name__, d_x.shape, d_x.dtype)
back = np.empty_like(x)
d_x.copy_to_host(back)  # reuse a host buffer instead of allocating a new one
print(back)

# %% [markdown]
# ## The copies Numba makes for you
#
# You may pass NumPy arrays straight to a kernel. It works, because Numba copies each array
# to the device before the launch **and back after it**, whether or not the kernel changed
# it. Convenient, and a trap inside a loop: on a GPU Numba warns with a
# `NumbaPerformanceWarning` ("Host array used in CUDA kernel will incur copy overhead").
#
# A worked example: three steps of `x = 2x + 1`, first with a NumPy array (six copies), then
# with a device array (two copies). Both give the same answer.

# %%
@cuda.jit
def twice_plus_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = 2 * x[i] + 1


def steps_with_host_array(x, steps=3):
    for _ in range(steps):
        twice_plus_one[(x.size + 255) // 256, 256](x)  # copies x in and out every time
    return x


def steps_on_device(x, steps=3):
    d = cuda.to_device(x)  # one copy in
    for _ in range(steps):
        twice_plus_one[(d.size + 255) // 256, 256](d)
    return d.copy_to_host()  # one copy out


def on_device_or_doctor(steps, x):
    """On a GPU, steps(x); without one, on the kernel doctor (CPU, much faster than the simulator)."""
    return steps(x) if ON_GPU else grader.doctor.run(steps, x)


x = np.zeros(100_000, np.float32)
host_way = on_device_or_doctor(steps_with_host_array, x.copy())
device_way = on_device_or_doctor(steps_on_device, x)
print("same answer:", np.array_equal(host_way, device_way))
print("first values:", device_way[:3], "(0 -> 1 -> 3 -> 7)")

# %% [markdown]
# ## Measuring it (on a GPU)
#
# To time work that includes copies, use the host's clock around the whole thing, with a
# `cuda.synchronize()` at the end, after a warm-up call. This is what the user of your code
# waits for. On the simulator the cell shows the method and prints no numbers: a simulated
# copy is a NumPy copy and a simulated kernel is Python threads, so the proportions would be
# meaningless.

# %%
def wall_ms(run, repeats=5):
    """Median wall-clock milliseconds of run(), after a warm-up call."""
    run()
    cuda.synchronize()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        cuda.synchronize()
        times.append((time.perf_counter() - started) * 1e3)
    return float(np.median(times))


data = np.random.default_rng(0).standard_normal(n if ON_GPU else 256).astype(np.float32)
host_ms = wall_ms(lambda: steps_with_host_array(data.copy()))
device_ms = wall_ms(lambda: steps_on_device(data))
if ON_GPU:
    print(f"3 steps, NumPy array passed each time: {host_ms:7.2f} ms")
    print(f"3 steps, data kept on the device:      {device_ms:7.2f} ms")
else:
    print("Simulator: measured the method, no numbers shown. On a GPU, with 16 M elements, "
          "keeping the data on the device is typically about 3 times faster here, because "
          "the six copies become two.")

# %% [markdown]
# ## Where the time goes
#
# CUDA events split the round trip of `vector_add` into its three parts. Events are recorded
# in the GPU's queue, so they time copies and kernels alike.

# %%
@cuda.jit
def add_kernel_demo(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def round_trip(a, b):
    """Copy in, add, copy out; returns the result and the milliseconds of each part."""
    marks = [cuda.event() for _ in range(4)]
    marks[0].record()
    d_a, d_b = cuda.to_device(a), cuda.to_device(b)
    marks[1].record()
    d_c = cuda.device_array_like(d_a)
    add_kernel_demo[(a.size + 255) // 256, 256](d_a, d_b, d_c)
    marks[2].record()
    c = d_c.copy_to_host()
    marks[3].record()
    marks[3].synchronize()
    parts = [marks[k].elapsed_time(marks[k + 1]) for k in range(3)]
    return c, parts


size = n if ON_GPU else 256
a = np.random.default_rng(1).standard_normal(size).astype(np.float32)
b = np.random.default_rng(2).standard_normal(size).astype(np.float32)
round_trip(a, b)  # warm-up: compiles the kernel
c, parts = round_trip(a, b)
print("correct:", np.allclose(c, a + b))
if ON_GPU:
    for name, ms in zip(("copy a, b in", "kernel", "copy c out"), parts):
        print(f"{name:13} {ms:7.3f} ms  {ms / sum(parts):6.1%}")
else:
    print("Simulator: no timings. On a GPU the kernel is typically 1-3% of this round trip.")

# %% [markdown]
# ## Pinned memory
#
# Ordinary host memory is *pageable*: the operating system may move it or swap it out. The
# GPU's copy engine can only read memory that stays put, so for a pageable array the driver
# first copies it into a hidden *pinned* (page-locked) buffer, then sends it over the bus.
# Allocate the host array pinned in the first place and that extra copy disappears:
#
# ```python
# host = cuda.pinned_array(n, dtype=np.float32)   # page-locked host memory
# ```
#
# Pinned copies typically run 1.5 to 2 times faster, and only they can be *asynchronous*
# (overlapping with kernels on other streams). But pinned memory is taken away from the rest
# of the system and slow to allocate: use it for buffers you reuse, not for everything.

# %%
def copy_gb_per_s(host, repeats=5):
    """Host -> device bandwidth in GB/s, timed with events after a warm-up copy."""
    d = cuda.device_array_like(host)
    d.copy_to_device(host)
    times = []
    for _ in range(repeats):
        start, end = cuda.event(), cuda.event()
        start.record()
        d.copy_to_device(host)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return host.nbytes / (float(np.median(times)) / 1e3) / 1e9


pageable = np.ones(size, np.float32)
pinned = cuda.pinned_array(size, dtype=np.float32)
pinned[:] = 1
pageable_rate, pinned_rate = copy_gb_per_s(pageable), copy_gb_per_s(pinned)
if ON_GPU:
    print(f"pageable: {pageable_rate:5.1f} GB/s   pinned: {pinned_rate:5.1f} GB/s")
else:
    print("Simulator: no timings. On a PCIe 4 machine, typically ~10-20 GB/s pageable and "
          "~25 GB/s pinned.")

# %% [markdown]
# ## How the grader handles this
#
# The grader copies the inputs to the device *before* calling your `launch`, and hands it
# device arrays. Your `launch` should never copy: on a GPU its time is the kernel's time
# alone. In your own programs, apply the same discipline: copy in once, chain kernels on
# device arrays, copy out once.

# %% [markdown]
# ## Check your understanding
#
# 1. A kernel reads 1 GB and writes 1 GB on a GPU with 3,000 GB/s. The inputs come over a
#    25 GB/s bus and the outputs go back. Roughly what fraction of the time is the kernel?
# 2. Why does passing a NumPy array to a kernel inside a loop of 100 launches hurt?
# 3. When is pinned memory *not* worth it?
#
# <details><summary>Answers</summary>
#
# 1. Kernel: 2 GB / 3,000 GB/s ≈ 0.7 ms. Copies: 2 GB / 25 GB/s = 80 ms. The kernel is under 1%.
# 2. Each launch copies the array to the device and back: 200 copies instead of 2.
# 3. For a buffer used once (allocation is slow) or a very large one (it takes RAM away from
#    everything else).
#
# </details>

# %% [markdown]
# ## Recap
#
# - The bus between host and device is 50 to 200 times slower than device memory: the
#   transfer often dominates.
# - NumPy arrays passed to a kernel are copied in and out at every launch; pass device arrays.
# - Copy in once, run every kernel on the device, copy out once.
# - Pinned host memory makes copies faster and lets them overlap with work.
# - Measure on a GPU; on the simulator only the method carries over.
#
# **Next:** [06 · Reduce sum](06-reduce-sum-shared-memory-atomics.ipynb): many threads, one
# answer. Races, atomics and shared memory.

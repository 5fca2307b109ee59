# Source of curriculum/00-how-gpus-work.ipynb — edit here, then run `python curriculum/build.py`.

# %% [markdown]
# # 00 · Why GPUs, and how this course works
#
# **In this notebook you will**
#
# - see what a GPU is good at, and why;
# - meet the two computers in every GPU program: the *host* and the *device*;
# - learn the names of the pieces a GPU program is cut into: grid → blocks → threads → warps;
# - find out whether you are on a real GPU or on Numba's CUDA *simulator*, and what changes;
# - run a kernel, and read what a *check cell* tells you about it.
#
# There is nothing to write yet. Run each cell with **Shift-Enter**, top to bottom.

# %% [markdown]
# ## Why GPUs?
#
# A CPU has a handful of powerful cores, each built to finish *one* stream of work as soon as
# possible: big caches, branch prediction, instructions run out of order. A GPU makes the
# opposite bet: thousands of simple arithmetic lanes that each run slowly, but all at once,
# and a memory system built for moving huge amounts of data rather than for answering one
# request quickly.
#
# | | a desktop CPU | a data-centre GPU (e.g. H100/H200) |
# | --- | --- | --- |
# | cores / lanes | 8–32 cores | 132 multiprocessors × 128 lanes ≈ 17,000 |
# | memory bandwidth | 50–100 GB/s | 3,000–5,000 GB/s |
# | float32 arithmetic | 1–3 TFLOP/s | about 60 TFLOP/s (far more with tensor cores) |
#
# So a GPU wins when the same small piece of work has to be done for millions of data items:
# pixels, vector elements, matrix entries. Your job in this course is to cut a problem into
# such pieces, and to feed the GPU's memory system the way it likes to be fed.

# %% [markdown]
# ## Two computers: host and device
#
# A GPU program runs on two processors with two separate memories:
#
# ```
#   HOST: the CPU and its RAM                       DEVICE: the GPU and its own memory
#   your Python code, NumPy arrays   ── PCIe bus ──  device arrays; kernels run here
# ```
#
# Every GPU computation follows the same four steps:
#
# 1. **copy** the inputs from host memory to device memory;
# 2. **launch** a *kernel*: a function that the GPU runs many times in parallel;
# 3. the kernel writes its results into device memory;
# 4. **copy** the results back to the host.
#
# The bus between the two is slow compared with either memory. Notebook 05 measures how slow,
# and why good GPU programs keep their data on the device.

# %% [markdown]
# ## Grid → blocks → threads → warps
#
# When you launch a kernel you say how many copies of it to run, in two levels:
#
# ```
# grid (one kernel launch)
# ├── block 0:  thread 0, thread 1, ..., thread 127
# ├── block 1:  thread 0, thread 1, ..., thread 127
# └── block 2:  thread 0, thread 1, ..., thread 127
# ```
#
# - A **thread** is one run of the kernel function. Each thread knows its own numbers
#   (which block, which thread inside it) and uses them to pick the data it works on.
# - A **block** is a group of threads (up to 1024) that run on the same multiprocessor. They
#   can share a small fast memory and wait for each other. Blocks cannot talk to each other.
# - The **grid** is all the blocks of one launch. The GPU runs the blocks in any order it
#   likes, as many at a time as fit.
# - A **warp** is 32 consecutive threads of a block. The hardware issues instructions a
#   warp at a time: the 32 threads execute the same instruction together. Warps are why
#   block sizes are multiples of 32, and why it matters *which* memory neighbouring threads
#   touch (notebook 04).

# %% [markdown]
# ## The first cell of every notebook
#
# Numba can run CUDA kernels on a real NVIDIA GPU, or on its **CUDA simulator**, which runs
# them in plain Python on the CPU. It decides which one when `numba.cuda` is first imported.
# So every notebook starts with `import grader`, *before* anything imports numba: the grader
# looks for a usable GPU and falls back to the simulator when there is none.
#
# If you ever see an error saying numba was imported before the grader, restart the kernel
# (Kernel → Restart) and run the cells from the top.

# %% tags=["setup"]
import grader  # first, before numba: it picks the GPU, or the simulator when there is none
import numpy as np
from numba import cuda

from grader.notebook import widgets

print(f"Running on: {grader.BACKEND}")

# %% [markdown]
# ## The simulator: what it is, and when you are on it
#
# If the cell above printed `simulator`, there is no usable NVIDIA GPU here (a laptop, a
# Mac, a CI machine), and your kernels run on Numba's CUDA simulator. It runs every CUDA
# thread as a Python thread, so:
#
# - **correctness carries over.** A kernel that gives the right answer on the simulator
#   almost always gives it on a GPU. The simulator even stops at an index past the end of
#   an array, where a GPU would silently scribble over memory.
# - **speed does not.** One simulated thread costs about 0.2 ms, a million times slower than
#   a GPU thread. Timings taken on the simulator say nothing about the GPU, so the notebooks
#   never show them.
# - **sizes stay small on the simulator.** A few thousand threads already take a second.
#   So the checks, and the lesson cells that launch kernels, run on Zero to GPU's **kernel
#   doctor** instead wherever it can: it executes the same kernels on the CPU 30 to 300
#   times faster than the simulator (a million-element vector add in about a second), and
#   falls back to the simulator for what it cannot run. On a GPU the same code runs on
#   millions of elements in microseconds.
# - **some bugs hide on the simulator.** Simulated threads take turns, so two threads rarely
#   collide. The kernel doctor sees races, missing atomics and unsynchronised threads
#   (notebook 06) whatever order the threads ran in, and `grader.check` reports them.
#
# `grader.BACKEND` tells your code where it runs. To force the simulator on a GPU machine,
# start Jupyter with the environment variable `ZEROGPU_BACKEND=simulator`.

# %% [markdown]
# ## A first kernel, end to end
#
# Here is the whole host–device round trip. Don't worry about every line of the kernel yet:
# notebook 01 takes it apart. For now, notice the four steps.

# %%
@cuda.jit
def double_it(x, out):
    i = cuda.grid(1)  # which element is mine? (notebook 01 explains)
    if i < x.size:
        out[i] = 2 * x[i]


x = np.arange(10, dtype=np.float32)  # an array in host memory
d_x = cuda.to_device(x)  # 1. copy it to the device
d_out = cuda.device_array_like(d_x)  # room for the answer, on the device
double_it[2, 8](d_x, d_out)  # 2.-3. launch 2 blocks of 8 threads
print(d_out.copy_to_host())  # 4. copy the answer back, then print it

# %% [markdown]
# `double_it[2, 8](...)` is a **launch**: the square brackets say how many blocks (2) and how
# many threads per block (8), so 16 threads run the kernel. Only 10 elements exist, so 6
# threads find `i >= x.size` and do nothing. A kernel returns nothing: it writes its results
# into an array you pass in.
#
# On a GPU a launch is *asynchronous*: Python continues at once while the GPU works.
# `copy_to_host()` waits for the kernel to finish before copying. Notebook 02 shows why that
# matters when you time a kernel.

# %% [markdown]
# ## How a check cell works
#
# From notebook 01 on, each notebook has an **exercise cell** and a **check cell**:
#
# - the exercise cell holds a task statement and a kernel with `# TODO`s. Its `launch(...)`
#   function picks the grid and launches your kernel;
# - the check cell runs `grader.check("<exercise id>", launch)`. The grader calls your `launch`
#   on several cases, including awkward sizes such as 1 element, a prime number of elements,
#   and one more or one less than a block. The outputs arrive filled with garbage, and
#   guarded at both ends, so an element you forgot to write, or one you wrote past the end,
#   is caught. Every answer is compared with an exact float64 computation.
#
# A check never raises an error at you, even for a broken kernel: it shows a verdict. Here is
# one on purpose: a vector addition that subtracts.

# %%
@cuda.jit
def subtract_by_mistake(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] - b[i]  # the bug: vector_add wants a[i] + b[i]


def launch(a, b, c):
    subtract_by_mistake[(c.size + 127) // 128, 128](a, b, c)


grader.check("vector_add", launch)

# %% [markdown]
# How to read it:
#
# - the **verdict** at the top (here: *wrong result*) and the first case that failed, with the
#   first wrong elements;
# - a **hint** that says what usually causes this verdict in this exercise;
# - the **cases**, with their sizes;
# - the **speed** line. On the simulator it says *not measured*; on a GPU a passing kernel is
#   timed against a simple *baseline* kernel and a fast *target* kernel, and you see its
#   speedup and the memory bandwidth or FLOP/s it reached;
# - where it **ran**, and the random *seed* of the inputs.
#
# | verdict | what it means |
# | --- | --- |
# | passed | every case is right |
# | wrong result | some elements differ from the exact answer by more than rounding |
# | unwritten output | some elements were never written |
# | out of bounds | the kernel wrote outside an array |
# | exception | the kernel or `launch` stopped with an error (the line is shown) |
# | race | two runs on the same input gave different answers |
# | timeout | the kernel never finished (an endless loop?) |
# | too slow | right, but slower on a GPU than the exercise asks |

# %% [markdown]
# ## The ladder
#
# The course is a ladder of exercises, each building on the one before:

# %%
for exercise in grader.ladder():
    print(f"{exercise.spec.stage:>2}  {exercise.id:<14} {exercise.spec.title}")

# %% [markdown]
# You can also check an exercise file from a terminal, in its own process:
#
# ```
# zerogpu list                                      # the ladder, with your status
# zerogpu check vector_add exercises/vector_add.py  # exit status 0 when it passes
# ```
#
# Every check — a check cell here or `zerogpu check` in a terminal — runs your code in its own
# process with a time limit (an endless loop cannot freeze this notebook) and records the result
# on this computer. This picture of the ladder reads that record:

# %%
widgets.progress()

# %% [markdown]
# ## Recap
#
# - A GPU runs thousands of threads at once; it wins on large, regular, data-parallel work.
# - Host and device have separate memories: copy in, launch, copy out.
# - A launch is a grid of blocks of threads; the hardware runs threads in warps of 32.
# - `import grader` first; `grader.BACKEND` says `gpu` or `simulator`. The simulator checks
#   correctness with tiny sizes and never measures speed.
# - A check cell shows a verdict, a hint, the cases and (on a GPU) the speed.
#
# **Next:** [01 · Your first kernel](01-first-kernel-thread-ids.ipynb): every thread works out
# which element is its own.

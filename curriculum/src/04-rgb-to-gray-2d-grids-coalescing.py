# Source of curriculum/04-rgb-to-gray-2d-grids-coalescing.ipynb — edit here, then run `python curriculum/build.py`.

# %% [markdown]
# # 04 · RGB to gray: 2-D grids and memory coalescing
#
# **In this notebook you will**
#
# - launch a two-dimensional grid of two-dimensional blocks and use `cuda.grid(2)`;
# - see how a 2-D array is laid out in memory (row-major);
# - learn what *coalescing* is: why the 32 threads of a warp should read neighbouring
#   addresses, and which of x and y must therefore walk along a row;
# - convert a colour image to gray.

# %% tags=["setup"]
import grader  # first, before numba: it picks the GPU, or the simulator when there is none
import matplotlib.pyplot as plt
import numpy as np
from numba import cuda

from grader.notebook import widgets

print(f"Running on: {grader.BACKEND}")

# %% [markdown]
# ## Grids and blocks in two dimensions
#
# For images and matrices it is natural to number threads in two dimensions. Pass pairs:
#
# ```python
# threads = (tx, ty)          # a block of tx × ty threads
# blocks = (bx, by)           # a grid of bx × by blocks
# kernel[blocks, threads](...)
# ```
#
# Inside the kernel, `x, y = cuda.grid(2)` gives the thread's global coordinates:
# `x = blockIdx.x * blockDim.x + threadIdx.x`, and the same with `.y`. The order is
# **(x, y)**, and x is the one that counts fastest: the threads of a warp are 32 consecutive
# `threadIdx.x` values (then the next `threadIdx.y`).

# %% [markdown]
# ## Worked example: label every cell of a 5 × 7 array
#
# Rows are y and columns are x. Blocks of 4 × 2 threads need 2 blocks across the 7 columns
# and 3 blocks down the 5 rows; both edges need a guard.

# %%
@cuda.jit
def label_cells(label, block_id):
    col, row = cuda.grid(2)  # x walks the columns, y the rows
    if row < label.shape[0] and col < label.shape[1]:  # guard both edges
        label[row, col] = 10 * row + col
        block_id[row, col] = cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x


rows, cols = 5, 7
threads = (4, 2)  # (x: columns, y: rows)
blocks = ((cols + threads[0] - 1) // threads[0], (rows + threads[1] - 1) // threads[1])
label = cuda.device_array((rows, cols), np.int32)
block_id = cuda.device_array((rows, cols), np.int32)
label_cells[blocks, threads](label, block_id)

print(f"blocks = {blocks}, threads = {threads}")
print("label[row, col] = 10 * row + col:")
print(label.copy_to_host())
print("which block wrote each cell:")
print(block_id.copy_to_host())

# %% [markdown]
# ## Row-major memory
#
# Memory is one long line of bytes. NumPy (and C, and CUDA) store a 2-D array **row by
# row**: `a[r, c]` sits at position `r * width + c`. So `a[r, c]` and `a[r, c + 1]` are
# neighbours, while `a[r, c]` and `a[r + 1, c]` are a whole row apart.

# %%
a = np.arange(12, dtype=np.float32).reshape(3, 4)
print(a)
print("in memory:", a.ravel())
print("strides (bytes to the next row, to the next column):", a.strides)

# %% [markdown]
# ## Coalescing
#
# The GPU does not fetch single numbers from its memory: it fetches **32-byte sectors**.
# When the 32 threads of a warp load at the same instruction, the hardware gathers their
# addresses and fetches every sector they touch. If the 32 addresses are neighbours, that is
# 4 sectors (128 bytes) for 128 useful bytes: the access is *coalesced*. If they are far
# apart, each thread drags in its own sector.
#
# Switch the picture between *row* and *column*: lane `t` of the warp is the thread with
# `threadIdx.x == t`.

# %%
widgets.coalescing(rows=8, cols=32, order="row")

# %% [markdown]
# Reading down a column fetches 32 sectors, 1024 bytes, to use 128: eight times the memory
# traffic for the same work. Here it is as a still picture:

# %%
widgets.coalescing(rows=8, cols=32, order="column")

# %% [markdown]
# **The rule:** let x (the fastest-counting thread index) walk the *last* array index, the one
# that is contiguous in memory. For `gray[row, col]` that means `col` comes from x:
#
# ```python
# col, row = cuda.grid(2)
# ```
#
# Swap them and the kernel still gives the right answer, only several times slower on a GPU.
# The simulator cannot tell the difference; the GPU check can, and calls it *too slow*.

# %% [markdown]
# ## Your turn: `rgb_to_gray`
#
# The image is an `h × w × 3` array of `uint8`: the three colour values of a pixel are
# neighbours in memory, and pixels follow each other along a row. Compute
# `gray = 0.299 R + 0.587 G + 0.114 B` for every pixel, with x along the row.

# %% [exercise] rgb_to_gray

# %% [check] rgb_to_gray

# %% [markdown]
# The cases include a 1 × 1 image, prime sizes, and sizes one short of and one past a block
# in each direction: if one edge guard is missing, one of them catches it.

# %% [markdown]
# ## See your kernel at work
#
# A small test picture, converted by your `launch`. The gray image starts black (zeros), so
# anything your kernel does not write stays black. As shipped, the starter writes nothing.

# %%
h, w = 240, 400  # a GPU would do a 4K photo in well under a millisecond
yy, xx = np.mgrid[0:h, 0:w]
picture = np.zeros((h, w, 3), np.uint8)
picture[..., 0] = 255 * xx // (w - 1)  # red grows to the right
picture[..., 1] = 255 * yy // (h - 1)  # green grows downwards
picture[(yy - h / 2) ** 2 + (xx - w / 2) ** 2 < 60, 2] = 255  # a blue disc



def to_gray(picture):
    d_gray = cuda.to_device(np.zeros(picture.shape[:2], np.float32))
    launch(cuda.to_device(picture), d_gray)
    return d_gray.copy_to_host()


# Without a GPU, the kernel doctor runs it (96,000 threads: about half a second).
gray = to_gray(picture) if grader.BACKEND == "gpu" else grader.doctor.run(to_gray, picture)

fig, (left, right) = plt.subplots(1, 2, figsize=(8, 2.6))
left.imshow(picture)
left.set_title("colour (h × w × 3, uint8)")
right.imshow(gray, cmap="gray", vmin=0, vmax=255)
right.set_title("your gray (h × w, float32)")
for ax in (left, right):
    ax.axis("off")
plt.show()

# %% [markdown]
# ## Recap
#
# - 2-D launches take pairs: `kernel[(bx, by), (tx, ty)]`; `x, y = cuda.grid(2)`; guard both
#   edges.
# - Arrays are row-major: the last index is contiguous.
# - A warp's loads are coalesced when its 32 threads touch neighbouring addresses, so x must
#   walk the contiguous index: `col, row = cuda.grid(2)`.
# - On the simulator both orders pass; on a GPU the crossed one is several times slower.
#
# **Next:** [05 · Moving data](05-moving-data.ipynb): what copying between host and device
# costs, and how to avoid paying it twice.

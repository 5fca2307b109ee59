"""stencil_1d — a 7-point stencil (a small convolution) with a shared-memory tile.

Write `out[i] = weights[0]·x[i-3] + weights[1]·x[i-2] + ... + weights[6]·x[i+3]` for every
i, that is `out[i] = Σ_k weights[k]·x[i+k-3]` for k = 0..6, where x outside [0, n) counts as 0.

- `x` and `out` are float32 device arrays of length n; `weights` is a float32 array of 7.
- `out` arrives filled with garbage: your kernel must write every element.
- Each x[j] is needed by 7 different threads. Rather than have every thread read its 7
  neighbours from global memory, each block copies its slice of x once into shared memory:
    1. thread t of the block stores x[i] (i its global index) at `tile[t + 3]`; threads
       0, 1, 2 also load the halo: the 3 elements just before the block's slice (at
       tile[0..2]) and the 3 just after it (at tile[THREADS + 3 ..]). Store 0 for any index
       outside [0, n). Careful: in Numba a negative index does not fail, it wraps around to
       the end of x, so test `j >= 0` yourself;
    2. `cuda.syncthreads()`, so the whole tile is loaded before anyone reads it;
    3. thread t computes out[i] from tile[t] .. tile[t + 6], if i < n.
- Halos are what this exercise teaches. Speed is another matter: on recent GPUs the L1
  cache already catches most of this 7-fold reuse, so the tile is not much faster than
  the naive kernel here. It pays off when each element is reused many times, as in
  matmul_tiled.
"""
from numba import cuda, float32

RADIUS = 3
THREADS_PER_BLOCK = 256
TILE = THREADS_PER_BLOCK + 2 * RADIUS  # the block's slice of x and a halo on each side


@cuda.jit
def stencil_kernel(x, weights, out):
    tile = cuda.shared.array(TILE, float32)  # the size must be a constant
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.size

    # 1. the block's slice of x, 0 past the end
    value = float32(0.0)
    if i < n:
        value = x[i]
    tile[tid + RADIUS] = value
    # ... and the halos: RADIUS elements on each side
    if tid < RADIUS:
        left = i - RADIUS
        value = float32(0.0)
        if left >= 0:  # (left < n: this block has thread tid, so i - 3 < n)
            value = x[left]
        tile[tid] = value
        right = i + THREADS_PER_BLOCK
        value = float32(0.0)
        if right < n:
            value = x[right]
        tile[tid + THREADS_PER_BLOCK + RADIUS] = value

    # 2. wait until the whole tile is loaded
    cuda.syncthreads()

    # 3. out[i] from the tile
    if i < n:
        acc = float32(0.0)
        for k in range(2 * RADIUS + 1):
            acc += weights[k] * tile[tid + k]
        out[i] = acc


def launch(x, weights, out):
    blocks = (x.size + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    stencil_kernel[blocks, THREADS_PER_BLOCK](x, weights, out)

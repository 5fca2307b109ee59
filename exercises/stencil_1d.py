"""stencil_1d — a 7-point stencil (a small convolution) with a shared-memory tile.

Write `out[i] = weights[0]·x[i-3] + weights[1]·x[i-2] + ... + weights[6]·x[i+3]` for every
i, that is `out[i] = Σ_k weights[k]·x[i+k-3]` for k = 0..6, where x outside [0, n) counts as 0.

- `x` and `out` are float32 device arrays of length n; `weights` is a float32 array of 7.
- `out` arrives filled with garbage: your kernel must write every element.
- Each x[j] is needed by 7 different threads. Rather than have every thread read its 7
  neighbours from global memory, each block copies its slice of x once into shared memory.
  A block of 256 threads handles a slice of SPAN = 4 × 256 outputs, 4 per thread: with one
  output per thread, each thread has a single load in flight and the whole block waits at
  the barrier for it, and on an H200 that was slower than no tile at all.
    1. thread t of the block loads 4 values of the slice, 256 apart (so each of the 4 loads
       is coalesced): x[start + t + 256·k] goes to `tile[t + 256·k + 3]`, for k = 0..3,
       where start = blockIdx.x · SPAN; threads 0, 1, 2 also load the halo: the 3 elements
       just before the slice (at tile[0..2]) and the 3 just after it (at tile[SPAN + 3 ..]).
       Store 0 for any index outside [0, n). Careful: in Numba a negative index does not
       fail, it wraps around to the end of x, so test `j >= 0` yourself;
    2. `cuda.syncthreads()`, so the whole tile is loaded before anyone reads it;
    3. thread t computes the outputs at start + t + 256·k, for k = 0..3, each from 7
       consecutive tile values, if the index is < n.
"""
from numba import cuda, float32

RADIUS = 3
THREADS_PER_BLOCK = 256
PER_THREAD = 4  # outputs per thread
SPAN = THREADS_PER_BLOCK * PER_THREAD  # outputs per block
TILE = SPAN + 2 * RADIUS  # the block's slice of x and a halo on each side


@cuda.jit
def stencil_kernel(x, weights, out):
    tile = cuda.shared.array(TILE, float32)  # the size must be a constant
    tid = cuda.threadIdx.x
    start = cuda.blockIdx.x * SPAN
    n = x.size

    # 1. the block's slice of x, 0 past the end: 4 loads per thread, 256 apart
    for k in range(PER_THREAD):
        j = start + tid + k * THREADS_PER_BLOCK
        value = float32(0.0)
        if j < n:
            value = x[j]
        tile[tid + k * THREADS_PER_BLOCK + RADIUS] = value
    # ... and the halos: RADIUS elements on each side
    if tid < RADIUS:
        pass  # TODO: tile[tid] = x[start - RADIUS + tid] (0 if outside x), and
        # TODO: tile[tid + SPAN + RADIUS] = x[start + SPAN + tid] (0 if outside x)

    # 2. wait until the whole tile is loaded
    # TODO: make every thread wait here until the whole block has stored its part of the tile

    # 3. 4 outputs from the tile
    for k in range(PER_THREAD):
        q = tid + k * THREADS_PER_BLOCK  # this output's place in the slice
        i = start + q
        if i < n:
            acc = float32(0.0)
            # TODO: add weights[m] * tile[q + m] for m = 0 .. 2 * RADIUS
            out[i] = acc


def launch(x, weights, out):
    blocks = (x.size + SPAN - 1) // SPAN
    stencil_kernel[blocks, THREADS_PER_BLOCK](x, weights, out)

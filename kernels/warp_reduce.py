"""warp_reduce — out[0] = x[0] + x[1] + ... + x[n-1], float32, with warp shuffles: the lanes of
a warp add their values register to register (cuda.shfl_down_sync), one shared value per warp.

The problem of reduce_sum, solved a rung higher: its inputs, oracle, tolerance and baseline
(one global atomic per element) come from kernels/reduce_sum.py. Tolerance: a float32 sum of n
terms in any order, |out[0] - exact| <= summed(n, Σ|x_i|) (grader/authoring/tolerance.py).
"""

from numba import cuda, float32

from grader.authoring.references import reference
from grader.authoring.occupancy import one_wave
from grader.authoring.pairs import load_f32, pair_view
from grader.authoring.spec import Benchmark, Case, Spec

_REDUCE_SUM = reference("reduce_sum")
make_inputs = _REDUCE_SUM.make_inputs
oracle = _REDUCE_SUM.oracle
tolerance = _REDUCE_SUM.tolerance
baseline = _REDUCE_SUM.baseline

SPEC = Spec(
    id="warp_reduce",
    stage=11,
    title="Sum a vector with warp shuffles",
    lesson="Warp-level programming: lanes exchange registers with cuda.shfl_down_sync, masks "
    "name the lanes that take part, one shared value per warp and one atomic per block",
    params=_REDUCE_SUM.SPEC.params,
    make_inputs=make_inputs,
    cases=(
        Case("one element", {"n": 1}),
        Case("one past a warp", {"n": 33}),
        Case("one short of a block", {"n": 255}),
        Case("one past a block", {"n": 257}),
        Case("prime length, several blocks", {"n": 1031}),
    ),
    tolerance=tolerance,
    hints={
        "wrong_result": "Check the shuffles: cuda.shfl_down_sync(FULL_MASK, value, offset) with "
        "FULL_MASK = 0xFFFFFFFF and offsets 16, 8, 4, 2, 1 leaves the warp's sum in lane 0 "
        "(shfl_up_sync would leave it in lane 31). Every lane must take part, lanes past the end "
        "with 0; lane 0 of each warp writes per_warp[warp]; warp 0 adds the per_warp values and "
        "lane 0 adds the block's sum to out[0] with cuda.atomic.add.",
        "race": "A warp function's mask must name every lane that calls it, and every lane it "
        "names must call it: use 0xFFFFFFFF and call the shuffles outside any `if` (and before any "
        "`return`). Between lane 0 writing per_warp and warp 0 reading it, the whole block must "
        "wait at cuda.syncthreads().",
        "out_of_bounds": "The last block has threads past the end of x: let them shuffle 0 instead of reading x[i].",
    },
    benchmark=Benchmark(dims={"n": 1 << 28}, bound="read", bytes_moved=lambda d: 4.0 * d["n"]),
    # required_speedup: the default 1.2 over the one-atomic-per-element baseline, as for
    # reduce_sum (whose solution ran 248x faster on an H200); five gradings of this solution on
    # an H200 (2026-11-30, bench/trust.py): 234.3-235.1x.
)

FULL_MASK = 0xFFFFFFFF
TARGET_THREADS = 256
TARGET_WARPS = TARGET_THREADS // 32
ACCUMULATORS = 8


@cuda.jit(device=True)
def _warp_sum(value):
    """The sum of `value` over the warp's 32 lanes, in lane 0 (five shuffles, no memory)."""
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(FULL_MASK, value, offset)
        offset //= 2
    return value


@cuda.jit
def _sum_shuffles(x, x2, out):
    per_warp = cuda.shared.array(TARGET_WARPS, float32)
    # A grid-stride loop over pairs of floats (8-byte loads, grader/authoring/pairs.py) into 8
    # independent register sums, so that 8 loads are in flight at once rather than one after
    # another ...
    acc = cuda.local.array(ACCUMULATORS, float32)
    for k in range(ACCUMULATORS):
        acc[k] = float32(0.0)
    stride = cuda.gridsize(1)
    n = x.size // 2
    i = cuda.grid(1)
    while i + (ACCUMULATORS - 1) * stride < n:
        for k in range(ACCUMULATORS):
            lo, hi = load_f32(x2, i + k * stride)
            acc[k] += lo + hi
        i += ACCUMULATORS * stride
    while i < n:
        lo, hi = load_f32(x2, i)
        acc[0] += lo + hi
        i += stride
    total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
    if cuda.grid(1) == 0 and x.size % 2 == 1:
        total += x[x.size - 1]  # an odd last element
    # ... then five shuffles per warp, one shared value per warp, one barrier, ...
    lane = cuda.threadIdx.x % 32
    warp = cuda.threadIdx.x // 32
    total = _warp_sum(total)
    if lane == 0:
        per_warp[warp] = total
    cuda.syncthreads()
    # ... and warp 0 adds the block's 8 warp sums: one atomic per block.
    if warp == 0:
        total = float32(0.0)
        if lane < TARGET_WARPS:
            total = per_warp[lane]
        total = _warp_sum(total)
        if lane == 0:
            cuda.atomic.add(out, 0, total)


def target(x, out):
    """Grid-stride 8-byte loads (float pairs) into 8 register sums per thread, warp shuffles,
    one shared value per warp, one atomic per block, on one wave of blocks
    (grader/authoring/occupancy.py) so that no SM idles through a last partial wave. On an
    H200 at 2**28 (2026-12-01, `python3 bench/variants.py --only warp_reduce`): 0.2373 ms
    beside cupy.sum's 0.2396 in the same run; docs/BENCHMARKS-LOG.md (the same kernel with 4-byte
    loads: 0.247 ms against cupy.sum's 0.244)."""
    x2 = pair_view(x, x.size // 2)
    blocks = one_wave(_sum_shuffles, (x, x2, out), TARGET_THREADS)
    blocks = max(1, min(blocks, (x.size // 2 + TARGET_THREADS - 1) // TARGET_THREADS))
    _sum_shuffles[blocks, TARGET_THREADS](x, x2, out)

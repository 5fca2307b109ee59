"""Warp collectives on the kernel doctor: does each of numba-cuda's warp functions give what a
GPU gives (PTX's rules for source lanes, Numba's result types), and are misuses the doctor
cannot call a finding (a `width` argument, lanes that do not exist) explained?"""

import numpy as np
import pytest
from numba import cuda, int32

from grader.doctor.efficiency import forget
from grader.doctor.execute import execute
from grader.authoring.spec import Array, Case, Spec

FULL = 0xFFFFFFFF
COLUMNS = (
    "shfl",
    "shfl_up",
    "shfl_down",
    "shfl_xor",
    "ballot",
    "popc_ballot",
    "all",
    "any",
    "eq",
    "match_any",
    "match_all",
    "match_all_ok",
    "activemask",
    "lanemask_lt",
    "wrapped_shfl",
)


@cuda.jit
def every_intrinsic(out):
    lane = cuda.laneid
    t = cuda.threadIdx.x
    row = 0
    out[t, row] = cuda.shfl_sync(FULL, t * 10, 3)
    out[t, row + 1] = cuda.shfl_up_sync(FULL, t * 10, 2)
    out[t, row + 2] = cuda.shfl_down_sync(FULL, t * 10, 5)
    out[t, row + 3] = cuda.shfl_xor_sync(FULL, t * 10, 1)
    ballot = cuda.ballot_sync(FULL, lane % 3 == 0 or lane == 31)
    out[t, row + 4] = ballot
    out[t, row + 5] = cuda.popc(ballot)
    out[t, row + 6] = cuda.all_sync(FULL, lane < 40)
    out[t, row + 7] = cuda.any_sync(FULL, lane == 7)
    out[t, row + 8] = cuda.eq_sync(FULL, lane < 16)
    out[t, row + 9] = cuda.match_any_sync(FULL, lane // 8)
    both, same = cuda.match_all_sync(FULL, t // 32)
    out[t, row + 10] = both
    out[t, row + 11] = same
    if lane < 20:  # the lanes that take the branch
        out[t, row + 12] = cuda.activemask()
    else:
        out[t, row + 12] = -1
    out[t, row + 13] = cuda.lanemask_lt()
    out[t, row + 14] = cuda.shfl_sync(FULL, t, lane + 33)  # the lane counts by its low 5 bits
    cuda.syncwarp()


def intrinsic_spec(rows):
    return Spec(
        id="warps",
        stage=0,
        title="warps",
        lesson="",
        params=(Array("out", "int64", (rows, len(COLUMNS)), role="out"),),
        make_inputs=lambda d, rng: {},
        cases=(Case("one", {}),),
        tolerance=lambda i, e: 0,
    )


def expected_columns(threads):
    t = np.arange(threads)
    lane, base = t % 32, t - t % 32
    ballot_bits = sum(1 << k for k in range(32) if k % 3 == 0 or k == 31)
    signed = ballot_bits - (1 << 32)  # bit 31 set: Numba's int32 result is negative
    want = np.zeros((threads, len(COLUMNS)), np.int64)
    want[:, 0] = (base + 3) * 10
    want[:, 1] = np.where(lane >= 2, t - 2, t) * 10
    want[:, 2] = np.where(lane + 5 < 32, t + 5, t) * 10
    want[:, 3] = (base + (lane ^ 1)) * 10
    want[:, 4] = signed
    want[:, 5] = bin(ballot_bits).count("1")
    want[:, 6] = 1
    want[:, 7] = 1
    want[:, 8] = 0
    want[:, 9] = (np.uint32(0xFF) << (8 * (lane // 8)).astype(np.uint32)).view(np.int32)  # int32 bits
    want[:, 10] = -1  # all 32 lanes hold the same value: every bit, as an int32
    want[:, 11] = 1
    want[:, 12] = np.where(lane < 20, (1 << 20) - 1, -1)
    want[:, 13] = (1 << lane) - 1
    want[:, 14] = base + (lane + 33) % 32
    return want


def run(launch, spec):
    forget()
    return execute(spec, launch, {}, {})


def test_every_warp_function_gives_what_a_gpu_gives():
    """Shuffles (idx, up, down, xor, a lane past 31), votes, matches, activemask in a branch
    and lanemask_lt, over two warps: the values of PTX's rules and Numba's types."""

    def launch(out):
        every_intrinsic[1, 64](out)

    outcome = run(launch, intrinsic_spec(64))
    assert outcome.report.ran_on_doctor, outcome.report.reason
    assert outcome.error is None, outcome.error
    got = outcome.buffers["out"][1024:-1024].reshape(64, len(COLUMNS))
    want = expected_columns(64)
    for k, name in enumerate(COLUMNS):
        assert np.array_equal(got[:, k], want[:, k]), (name, got[:, k], want[:, k])
    kinds = {f.kind for f in outcome.report.findings}
    assert kinds == {"warp_lane_range"}  # lane + 33 is flagged, though its wrap-around is defined


@cuda.jit
def with_width(x, out):
    i = cuda.grid(1)
    out[i] = cuda.shfl_down_sync(FULL, x[i], 1, 16)


def test_a_width_argument_is_explained():
    """CUDA C's shuffles take a width, Numba's do not: is the learner told so, at their line?"""
    spec = Spec(
        id="w",
        stage=0,
        title="w",
        lesson="",
        params=(Array("x", "float32", ("n",)), Array("out", "float32", ("n",), role="out")),
        make_inputs=lambda d, rng: {},
        cases=(Case("one", {"n": 32}),),
        tolerance=lambda i, e: 0,
    )

    def launch(x, out):
        with_width[1, 32](x, out)

    forget()
    outcome = execute(spec, launch, {"x": np.ones(32, np.float32)}, {"n": 32})
    assert outcome.report.ran_on_doctor
    assert outcome.error.verdict == "exception"
    assert "no `width` argument" in outcome.error.message
    assert outcome.error.line == with_width.py_func.__code__.co_firstlineno + 3


@cuda.jit
def partial_warp(out):
    t = cuda.threadIdx.x
    out[t] = cuda.shfl_down_sync(FULL, t, 8)


def test_a_lane_past_the_block_is_named():
    """A block of 40 threads has a last warp of 8 lanes: reading lane 8 + 8 there is reading a
    lane that does not exist."""
    spec = Spec(
        id="p",
        stage=0,
        title="p",
        lesson="",
        params=(Array("out", "int64", (40,), role="out"),),
        make_inputs=lambda d, rng: {},
        cases=(Case("one", {}),),
        tolerance=lambda i, e: 0,
    )

    def launch(out):
        partial_warp[1, 40](out)

    outcome = run(launch, spec)
    finding = next(f for f in outcome.report.findings if f.kind == "warp_inactive_lane")
    assert "does not exist" in finding.message and "40 threads" in finding.message
    assert finding.thread == (32,) and outcome.error.verdict == "race"


@cuda.jit
def sum_in_branch(x, out):
    i = cuda.grid(1)
    if i < x.size:
        value = x[i]
        offset = 16
        while offset > 0:
            value += cuda.shfl_down_sync(0xFFFFFFFF, value, offset)
            offset //= 2
        if cuda.laneid == 0:
            cuda.atomic.add(out, 0, value)


@cuda.jit
def sum_after_return(x, out):
    i = cuda.grid(1)
    if i >= x.size:
        return
    value = x[i]
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(0xFFFFFFFF, value, offset)
        offset //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, value)


def _sum_spec(n):
    return Spec(
        id="u",
        stage=0,
        title="u",
        lesson="",
        params=(Array("x", "float32", ("n",)), Array("out", "float32", (1,), role="out", init="zeros")),
        make_inputs=None,
        cases=(Case("one", {"n": n}),),
        tolerance=lambda i, e: 0,
    )


@pytest.mark.parametrize(
    "kernel, threads, rule, fix",
    [
        (sum_in_branch, 64, "does not take part", "not inside the `if`"),  # lanes 8-31 skipped the `if`
        (sum_after_return, 64, "does not take part", "instead of returning early"),
        (sum_in_branch, 40, "does not take part", "multiple of 32"),  # a partial warp, full mask
    ],
)
def test_undefined_behaviour_is_named_not_valued(kernel, threads, rule, fix):
    """A shuffle reading a lane that has left or does not exist: the case fails as undefined
    behaviour (the rule, the lane and the line), never as a wrong value the doctor made up, and
    the fix speaks of what the kernel has (an `if`, a `return`, a partial warp)."""
    n = 40
    spec = _sum_spec(n)
    forget()
    outcome = execute(spec, lambda x, out: kernel[1, threads](x, out), {"x": np.ones(n, np.float32)}, {"n": n})
    error = outcome.error
    assert error.verdict == "race" and error.mistake == "warp_inactive_lane", error
    assert error.message.startswith("Undefined behaviour") and rule in error.message, error.message
    assert "(lane 0) read lane 16" in error.message and error.line is not None
    assert "should be" not in error.message
    assert fix in error.hint and (fix == "instead of returning early") == ("return" in error.hint), error.hint


@cuda.jit
def branch_mask(x, out):
    i = cuda.grid(1)
    if i < x.size:
        mask = cuda.activemask()
        value = x[i]
        offset = 1
        while offset < 32:
            up = cuda.shfl_up_sync(mask, value, offset)
            if cuda.laneid >= offset:
                value += up
            offset *= 2
        out[i] = value


@pytest.mark.parametrize("n", [32, 45])
def test_a_scan_under_an_active_mask_is_clean(n):
    """A warp scan inside `if i < n` with the branch's own mask reads only lanes that take
    part (shfl_up reads lower lanes): no finding, and the right prefix sums."""
    spec = Spec(
        id="s",
        stage=0,
        title="s",
        lesson="",
        params=(Array("x", "int32", ("n",)), Array("out", "int32", ("n",), role="out")),
        make_inputs=lambda d, rng: {},
        cases=(Case("one", {"n": n}),),
        tolerance=lambda i, e: 0,
    )
    x = np.arange(1, n + 1, dtype=np.int32)

    def launch(x, out):
        branch_mask[2, 32](x, out)

    forget()
    outcome = execute(spec, launch, {"x": x}, {"n": n})
    assert outcome.error is None and not outcome.report.findings, outcome.report.findings
    got = outcome.buffers["out"][1024:-1024]
    want = np.concatenate([np.cumsum(x[:32]), np.cumsum(x[32:])])
    assert np.array_equal(got, want)


def test_popc_counts_the_bits_of_its_type():
    """popc of an int32 -1 (a full ballot) is 32, of an int64 -1 is 64, as on a GPU."""
    from grader.doctor.fakecuda import FAKE_CUDA

    assert FAKE_CUDA.popc(np.int32(-1)) == 32 and FAKE_CUDA.popc(np.int64(-1)) == 64
    assert FAKE_CUDA.popc(int32(5)) == 2


@pytest.mark.parametrize("exercise_id", ["warp_reduce", "scan"])
def test_warp_rungs_run_on_the_doctor(exercise_id):
    """The warp rungs without a GPU: does the solution pass and the starter fail, in a child
    like the CLI, with the kernel doctor (not Numba's simulator, which has no shuffles)
    running every case?"""
    from grader.checking.check import check_file
    from grader.exercises import exercise

    ex = exercise(exercise_id)
    solved = check_file(exercise_id, ex.solution_file, seed=13)
    assert solved.verdict == "passed", solved.message
    assert solved.doctor.ran_on_doctor, solved.doctor.reason
    starter = check_file(exercise_id, ex.starter_file, seed=13)
    assert not starter.passed and starter.verdict in ("wrong_result", "unwritten_output")
    assert starter.doctor.ran_on_doctor, starter.doctor.reason


def test_the_memory_table_lists_sites_only_later_warps_run():
    """The scan's `warp_totals[warp - 1]`, which only warps 1-3 read: is it in the memory
    table of a correct solution, beside the sites warp 0 runs?"""
    from grader.doctor.execute import execute_source
    from grader.exercises import exercise

    ex = exercise("scan")
    source = ex.solution_file.read_text()
    n = 257
    rng = np.random.default_rng(1)
    inputs = {"counts": rng.integers(0, 9, n).astype(np.int32), "amounts": rng.random(n, np.float32)}
    forget()
    outcome = execute_source(ex.spec, source, str(ex.solution_file), inputs, {"n": n})
    assert outcome.error is None, outcome.error
    texts = {s.text for k in outcome.report.kernels for s in k.sites}
    assert {"warp_totals[warp - 1]", "warp_totals[lane]", "x[i]"} <= texts, texts

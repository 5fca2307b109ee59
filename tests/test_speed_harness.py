"""The GPU timing harness, run on Numba's simulator at tiny sizes: interleaving, fresh inputs
every round, sampled output checks rebuilt in the grading process. (The times themselves mean
nothing here; tests/test_gpu.py checks them on a real GPU.)"""

from dataclasses import replace

import numpy as np
import pytest
from numba import cuda

from grader.exercises import exercise, ladder
from grader.gpu.arena import variant_for, vary_on_device, vary_on_host
from grader.steps.cases import expected_and_tolerance
from grader.steps.load import load_launch
from grader.gpu.speed import benchmark_inputs, collect, evaluate, expected_for_check

CEILINGS = {"name": "simulated", "copy_bandwidth": 1e9, "fp32_flops": 1e9}


def tiny(exercise_id, dims):
    ex = exercise(exercise_id)
    spec = replace(ex.spec, benchmark=replace(ex.spec.benchmark, dims=dims))
    return replace(ex, spec=spec)


def solution(ex):
    return load_launch(ex.spec, ex.solution_file.read_text(), str(ex.solution_file))


@pytest.mark.parametrize("dtype", ["float32", "uint8"])
def test_device_and_host_build_the_same_varied_inputs(dtype):
    """The grading process must rebuild exactly what a timed launch was given."""
    rng = np.random.default_rng(0)
    base = (rng.standard_normal((5, 7)) * 50).astype(dtype)
    for round_index in range(3):
        variant = variant_for(9, round_index, 1, "x", base)
        on_device = cuda.device_array_like(base)
        vary_on_device(cuda.to_device(base), on_device, variant)
        assert np.array_equal(on_device.copy_to_host(), vary_on_host(base, variant))


def test_variants_differ_between_rounds():
    base = np.arange(100, dtype=np.float32)
    seen = {vary_on_host(base, variant_for(1, r, 0, "a", base)).tobytes() for r in range(6)}
    assert len(seen) >= 5


def test_solution_is_timed_against_baseline_and_target_and_its_outputs_checked():
    ex = tiny("vector_add", {"n": 300})
    samples = collect(ex, solution(ex), seed=5, min_rounds=2, cap_seconds=0.0)
    assert set(samples.seconds) == {"yours", "baseline", "target"}
    assert len(samples.seconds["yours"]) == len(samples.seconds["baseline"]) >= 2
    assert any(name == "yours" for name, *_ in samples.checked)
    speed, wrong = evaluate(ex, 5, samples, CEILINGS)
    assert wrong is None
    assert speed.measured and speed.details.speedup_vs_baseline is not None
    assert speed.details.summary.startswith("Speed: ")  # the summary line reads the typed figures


@cuda.jit
def _copy(src, dst):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = src[i]


def test_replaying_cached_answers_is_caught():
    """A launch that remembers its first answer fails on fresh inputs. The cache stays on the
    device (a submission's own launch could not read it on the host: it is recorded without data,
    grader/replay/). It is kept by size."""
    ex = tiny("vector_add", {"n": 300})
    real = solution(ex)
    cache = {}

    def replay(a, b, c):
        blocks = (c.size + 255) // 256
        key = c.size
        if key in cache:
            _copy[blocks, 256](cache[key], c)
            return
        real(a, b, c)
        cache[key] = cuda.device_array_like(c)
        _copy[blocks, 256](c, cache[key])

    samples = collect(ex, replay, seed=5, min_rounds=3, cap_seconds=0.0)
    _, wrong = evaluate(ex, 5, samples, CEILINGS)
    assert wrong and "benchmark size" in wrong


def test_a_timed_round_changes_softmaxs_input_without_changing_its_work():
    """Softmax's benchmark rows with a +90 element (the overflow test) make exp values that
    underflow to denormals, whose division is slow: its solution ran 0.56 ms on them and 0.45
    ms negated on an H200, and rows rotated by part of a row mix two rows' values, so that how
    many underflow changed from round to round (docs/BENCHMARKS-LOG.md). Each round's input,
    on the device and as the grading process rebuilds it, is the base input's rows in another
    order; a negatable input still changes sign from round to round."""
    from grader.gpu.arena import Arena as _Arena

    ex = tiny("softmax_fused", {"rows": 6, "cols": 40})
    (x_spec,) = ex.spec.inputs
    assert not x_spec.negatable
    (base,) = benchmark_inputs(ex, 7)
    arena = _Arena(ex.spec, [base], ex.spec.benchmark.dims, flush_words=8)
    rotations = set()
    for round_index in range(-1, 8):
        arena.fresh_inputs(0, 7, round_index)
        on_device = arena.inputs["x"].copy_to_host()
        rebuilt = expected_for_check(ex, 7, (round_index, 0))[0]["x"]
        assert np.array_equal(on_device, rebuilt)
        (rotation,) = [k for k in range(6) if np.array_equal(np.roll(base["x"], -k, axis=0), on_device)]
        rotations.add(rotation)
    assert len(rotations) > 1
    summed = tiny("reduce_sum", {"n": 50})
    x = summed.spec.make_inputs(summed.spec.benchmark.dims, np.random.default_rng(2))["x"]
    assert {variant_for(7, r, 0, "x", x).get("sign") for r in range(8)} == {-1.0, 1.0}


@pytest.mark.slow  # the benchmark's own size: 2^28 floats
@pytest.mark.parametrize("exercise_id", ["reduce_sum", "warp_reduce", "scan"])
def test_at_the_benchmark_size_an_answer_from_part_of_the_input_fails_and_one_float32_accumulator_passes(
    exercise_id,
):
    """A timed launch is judged at the benchmark's size, where a float32 sum's bound grows with
    √n·Σ|x|: with inputs of mean 0 the sum of 2^28 of them (about 10^4) was a hundredth of its
    bound (10^6), so a kernel that read half of x, or none, passed, and a scan's late prefixes
    likewise. One accumulator adding every value in turn (the baseline's order, the least
    accurate a kernel may use) must still pass."""
    ex = exercise(exercise_id)
    (inputs,) = benchmark_inputs(ex, 3)
    expected, tolerance = expected_and_tolerance(ex, inputs)
    (name,) = [o.name for o in ex.spec.outputs if np.dtype(o.dtype).kind == "f"]
    values = inputs["amounts" if exercise_id == "scan" else "x"]
    unread = values.copy()
    unread[int(0.9 * unread.size) :] = 0  # the last tenth never read
    if exercise_id == "scan":
        one_accumulator, from_part = np.cumsum(values, dtype=np.float32), np.cumsum(unread, dtype=np.float64)
    else:
        one_accumulator, from_part = np.cumsum(values, dtype=np.float32)[-1:], unread.sum(dtype=np.float64)
    exact, bound = np.asarray(expected[name], np.float64), np.asarray(tolerance[name], np.float64)
    assert np.all(np.abs(one_accumulator - exact) <= bound)
    outside = np.abs(from_part - exact) > bound
    # a scan's prefixes just past the unread start still pass: most of the last tenth must not
    assert outside[-1] and outside.mean() >= 0.05


def test_every_exercise_rebuilds_its_timed_inputs():
    """Sign flips and offsets keep every input valid for every exercise's oracle."""
    for exercise_id, dims in (
        ("histogram", {"n": 64}),
        ("softmax_fused", {"rows": 2, "cols": 5}),
        ("rgb_to_gray", {"h": 2, "w": 3}),
        ("stencil_1d", {"n": 9}),
        ("matmul_tiled", {"m": 3, "k": 2, "n": 4}),
        ("saxpy", {"n": 5}),
    ):
        ex = tiny(exercise_id, dims)
        inputs = ex.spec.make_inputs(dims, np.random.default_rng(0))
        for array in ex.spec.inputs:
            inputs[array.name] = vary_on_host(inputs[array.name], variant_for(3, 1, 0, array.name, inputs[array.name]))
        for name, value in ex.oracle(**inputs).items():
            assert np.all(np.isfinite(np.asarray(value, dtype=np.float64))), exercise_id


def test_byte_inputs_give_a_different_answer_every_round_and_keep_their_line_layout():
    """Histogram inputs: every round among 8 consecutive ones (warm-up included) has another
    histogram, so no earlier answer can be replayed; values move by whole 32s, so hot bins
    that shared a 128-byte line still do (steady atomic contention, steady timings)."""
    base = np.random.default_rng(0).integers(0, 256, 1000).astype(np.uint8)
    histograms = set()
    for round_index in range(-1, 7):
        varied = vary_on_host(base, variant_for(4, round_index, 0, "values", base))
        histograms.add(np.bincount(varied, minlength=256).tobytes())
        assert variant_for(4, round_index, 0, "values", base)["offset"] % 32 == 0
    assert len(histograms) == 8


def test_the_grading_process_has_the_checked_launchs_expected_output_computed_ahead_elsewhere():
    """check_file picks the timed launch to check and has its expected output computed in an
    oracle process while the child runs: at the picked elements, the same answer as computing
    it here afterwards, and a timed output judged against it is judged as against the whole."""
    from grader.checking.check import _expected_in_background
    from grader.gpu import speed
    from grader.steps import judge

    ex = tiny("saxpy", {"n": 5000})
    check_at, future = _expected_in_background(ex, 11, None)
    at_picks = future.result(timeout=120)
    _, expected, tolerance = expected_for_check(ex, 11, check_at)
    picked = judge.picks(5000, check_at[2])
    assert np.array_equal(at_picks.expected["out"], np.asarray(expected["out"])[picked])
    assert speed._oracles_started[0] >= 1  # computed in an oracle process, not here


def test_a_measurement_says_where_its_time_went_phase_by_phase():
    """The speed section's phases, in the order they happen (bench/trust.py reads them)."""
    ex = tiny("vector_add", {"n": 300})
    samples = collect(ex, solution(ex), seed=5, min_rounds=2, cap_seconds=0.0)
    assert list(samples.phases) == [
        "benchmark inputs",
        "inputs to device",
        "warm-up: yours",
        "warm-up: baseline",
        "warm-up: target",
        "timed rounds",
    ]
    assert all(seconds >= 0 for seconds in samples.phases.values())
    speed, wrong = evaluate(ex, 5, samples, CEILINGS)
    assert wrong is None and list(speed.details.phase_seconds) == list(samples.phases) + ["checking the timed output"]


@pytest.mark.parametrize("check", [[1, 0], [1, 0, 99]], ids=["whole", "sampled"])
def test_a_grading_childs_timing_reaches_its_parent_whole(tmp_path, monkeypatch, check):
    """The child's timing step (what a GPU child runs, here at a tiny size) leaves speed.json and
    the checked timed output; the parent reads back the samples, the child's phases first, and
    only the learner's launch at the chosen (round, set). Given the grading process's pick
    seed, the output comes back as the elements it judges, and is judged right."""
    from grader.children.folder import read_samples
    from grader.children.roles.replay import _time_submission
    from grader.sentinels import PAD
    from grader.steps import judge

    monkeypatch.setattr(judge, "SAMPLED", 50)  # fewer than the 300 elements: sampled for real
    ex = tiny("vector_add", {"n": 300})
    before = {"child: loading the file": 0.2, "child: correctness cases": 0.1}
    _time_submission(tmp_path, {"seed": 5, "check": check}, ex, solution(ex), before)
    samples = read_samples(tmp_path)
    assert not isinstance(samples, str), samples
    assert list(samples.phases)[:2] == list(before) and "timed rounds" in samples.phases
    assert [(name, r) for name, r, _, _ in samples.checked] == [("yours", 1)]
    assert samples.rounds >= 2 and len(samples.seconds["yours"]) == len(samples.seconds["baseline"])
    sent = samples.checked[0][3]["c"].size
    assert sent == (50 if len(check) > 2 else 300) + 2 * PAD and samples.sampled_with == (check[2:] or [None])[0]
    expected = (tuple(check), expected_for_check(ex, 5, check))
    speed, wrong = evaluate(ex, 5, samples, CEILINGS, expected=expected)
    assert wrong is None and speed.measured


def test_a_grading_childs_failed_timing_is_a_reason_not_a_crash(tmp_path):
    """A timing step that raises leaves its error for the parent, which shows it as the reason
    the speed was not measured."""
    from grader.children.folder import read_samples
    from grader.children.roles.replay import _time_submission
    from grader.checking.verdicts import judge_speed

    def broken(**kwargs):
        raise ValueError("no such buffer")

    ex = tiny("vector_add", {"n": 300})
    _time_submission(tmp_path, {"seed": 5, "check": [0, 0]}, ex, broken, {})
    samples = read_samples(tmp_path)
    assert isinstance(samples, str) and "no such buffer" in samples
    speed, wrong = judge_speed(ex, 5, samples)
    assert not speed.measured and "no such buffer" in speed.reason and wrong is None


def test_a_kept_arena_times_every_check_in_the_same_buffers_and_restores_them():
    """A replayer keeps the benchmark's buffers for the run (grader/gpu/arena.py `kept_arena`):
    the next check gets the very same buffers, with the inputs and the poisoned outputs the
    grader made, whatever a kernel of the check before wrote there; and its timed output is
    judged against the inputs drawn from the run's shared seed."""
    from grader.gpu import arena as arenas

    ex = tiny("vector_add", {"n": 300})
    first = collect(ex, solution(ex), seed=5, base_seed=11, keep=True, min_rounds=2, cap_seconds=0.0)
    arena = arenas._kept[(ex.id, 11)]
    kept_inputs = {name: buf.copy_to_host() for name, buf in arena.base[0].items()}
    for buf in (*arena.base[0].values(), *arena.pristine.values()):
        buf.copy_to_device(np.full(buf.size, 7, buf.dtype))  # scribbled on out of bounds
    second = collect(ex, solution(ex), seed=6, base_seed=11, keep=True, min_rounds=2, cap_seconds=0.0)
    assert arenas._kept[(ex.id, 11)] is arena, "the same buffers"
    assert all(np.array_equal(arena.base[0][n].copy_to_host(), kept_inputs[n]) for n in kept_inputs)
    for samples, seed in ((first, 5), (second, 6)):
        round_index, set_index = samples.checked[0][1:3]
        want = ((round_index, set_index), expected_for_check(ex, seed, (round_index, set_index), base_seed=11))
        speed, wrong = evaluate(ex, seed, samples, CEILINGS, expected=want)
        assert wrong is None, wrong
    arenas._kept.clear()


def test_an_arena_made_ready_ahead_is_not_refreshed_twice_unless_a_task_began_since(monkeypatch):
    """A replayer refreshes the kept buffers while the grading process judges the cases
    (`ready_for`); the timing then starts at once. A new task's kernels may write anywhere, so
    once one begins (`unready`) the buffers are refreshed again before any timing."""
    from grader.gpu import arena as arenas
    from grader.gpu.speed import ready_for

    ex = tiny("vector_add", {"n": 300})
    collect(ex, solution(ex), seed=5, base_seed=41, keep=True, min_rounds=2, cap_seconds=0.0)
    refreshes = []
    real = arenas.Arena.refresh
    monkeypatch.setattr(arenas.Arena, "refresh", lambda arena: refreshes.append(1) or real(arena))
    ready_for(ex, 41)
    collect(ex, solution(ex), seed=6, base_seed=41, keep=True, min_rounds=2, cap_seconds=0.0)
    assert len(refreshes) == 1, "made ready once, not refreshed again by the timing"
    ready_for(ex, 41)
    arenas.unready()  # the next task's cases ran here
    collect(ex, solution(ex), seed=7, base_seed=41, keep=True, min_rounds=2, cap_seconds=0.0)
    assert len(refreshes) == 3
    arenas._kept.clear()


def test_a_kept_arena_refreshes_from_page_locked_copies_of_what_the_grader_made():
    from grader.gpu import arena as arenas

    ex = tiny("saxpy", {"n": 300})
    collect(ex, solution(ex), seed=5, base_seed=31, keep=True, min_rounds=2, cap_seconds=0.0)
    arena = arenas._kept[(ex.id, 31)]
    made = {name: buf.copy_to_host() for name, buf in arena.base[0].items()}
    for buf in arena.base[0].values():
        buf.copy_to_device(np.full(buf.size, 3, buf.dtype))
    arena.refresh()
    arena.refresh()  # the copies are kept, and a refresh never changes them
    assert all(np.array_equal(arena.base[0][n].copy_to_host(), made[n]) for n in made)
    arenas._kept.clear()


def _address(device_array) -> int:
    """Where a device array's data starts (the simulator's wrap a NumPy array)."""
    return device_array._ary.__array_interface__["data"][0]


def test_a_pool_holds_one_arena_at_fixed_places():
    """A replayer's arenas are carved from one allocation made first (grader/gpu/harness.py
    `Pool`): an exercise's buffers start at the same offsets whenever its arena is made again,
    and a pool too small says so."""
    from grader.gpu import arena as arenas

    ex = tiny("vector_add", {"n": 300})
    arenas.reserve(64 << 20)

    def arena(exercise_id, seed):
        spec = tiny(exercise_id, {"n": 300}).spec
        inputs = [spec.make_inputs({"n": 300}, np.random.default_rng(seed))]
        return arenas.kept_arena((exercise_id, seed), spec, inputs, {"n": 300})

    def places(kept):
        return [_address(a) for a in (*kept.base[0].values(), *kept.buffers.values())]

    try:
        where = places(arena("vector_add", 1))
        arena("saxpy", 1)  # another exercise's arena, in the same pool
        again = arena("vector_add", 2)
        assert places(again) == where
        assert all(np.array_equal(again.base[0][n].copy_to_host(), again.input_sets[0][n]) for n in again.base[0])
        small = arenas.Pool(4 << 20)
        with pytest.raises(MemoryError, match="reserved"):
            arenas.Arena(ex.spec, [ex.spec.make_inputs({"n": 300}, np.random.default_rng(1))], {"n": 300}, pool=small)
    finally:
        arenas._pool = None
        arenas._kept.clear()


def test_a_pool_reserved_for_the_largest_benchmark_holds_every_exercises_arena():
    """The replayer reserves `arena_bytes` of the largest benchmark: every exercise's arena must
    fit in what is reserved for it, buffer by buffer (each rounded to the pool's 2 MiB steps)."""
    from grader.exercises import LADDER
    from grader.gpu import arena as arenas

    for exercise_id in LADDER:
        ex = exercise(exercise_id)
        if not ex.spec.benchmark:
            continue
        dims = {name: min(int(size), 64) for name, size in dict(ex.spec.benchmark.dims).items()}
        small = tiny(exercise_id, dims)
        pool = arenas.Pool(arenas.arena_bytes(small.spec))
        arenas.Arena(small.spec, [small.spec.make_inputs(dims, np.random.default_rng(0))], dims, pool=pool)
        assert pool.offset == arenas.arena_bytes(small.spec), exercise_id


def test_a_kernel_that_writes_into_the_timed_inputs_gets_no_speed_and_harms_no_rival():
    """On a GPU a kernel can write past its outputs into the benchmark's inputs, to make its
    rivals' work harder (every value one histogram bin) and so look faster. Each contender gets
    inputs made anew just before its launch, and base inputs changed during the timed rounds
    end the timing with no speed."""
    from grader.gpu import arena as arenas, harness

    ex = tiny("vector_add", {"n": 300})
    real = solution(ex)
    seen_by_rivals = []

    def spoils_the_inputs(**kwargs):
        real(**kwargs)
        kwargs["a"].copy_to_device(np.zeros(kwargs["a"].size, kwargs["a"].dtype))  # after its own answer

    def baseline(**kwargs):
        seen_by_rivals.append(kwargs["a"].copy_to_host())
        ex.baseline(**kwargs)

    samples = harness.measure(
        ex.spec,
        {"yours": spoils_the_inputs, "baseline": baseline},
        [ex.spec.make_inputs({"n": 300}, np.random.default_rng(1))],
        min_rounds=2,
        cap_seconds=0.0,
    )
    assert seen_by_rivals and all(np.any(a != 0) for a in seen_by_rivals)
    assert len(samples.seconds["baseline"]) >= 2

    def spoils_the_base(**kwargs):
        real(**kwargs)
        kept = arenas._kept[(ex.id, 4)]
        kept.base[0]["b"].copy_to_device(np.ones(kept.base[0]["b"].size, kept.base[0]["b"].dtype))

    with pytest.raises(arenas.InputsChanged, match="`b` changed"):
        collect(ex, spoils_the_base, seed=3, base_seed=4, keep=True, min_rounds=2, cap_seconds=0.0)
    arenas._kept.clear()


def _unvaried(monkeypatch) -> None:
    """Clocked rounds without the simulator's varying kernels (seconds a round on CI): these
    tests are about which launches a check times, not about its inputs."""
    from grader.gpu import arena as arenas

    monkeypatch.setattr(arenas.Arena, "fresh_inputs", lambda self, *args: None)


def _clocked(monkeypatch, seconds: dict) -> list:
    """Timed launches that take `seconds[launch]` (a list: one value per launch, cycled),
    without running anything; the launches made, in order."""
    from grader.gpu import harness

    made = []

    def timed_launch(launch, kwargs, arena, flush, hold_microseconds=0):
        made.append(launch)
        times = seconds[launch]
        return times[(made.count(launch) - 1) % len(times)], 0.0, 1e-4

    monkeypatch.setattr(harness, "_timed_launch", timed_launch)
    _unvaried(monkeypatch)
    return made


def _contender():
    def launch(**arrays):
        pass

    return launch


def test_a_rival_far_slower_than_yours_is_timed_in_the_first_rounds_only(monkeypatch):
    """A 471 ms baseline beside a 2 ms kernel would take nearly all of every round: it is timed
    in the first SPARSE_ROUNDS rounds, yours and the target every round until their ratio
    settles, and the speedup is the baseline's median over yours."""
    from grader.gpu import harness

    ex = tiny("vector_add", {"n": 300})
    yours, baseline, target = _contender(), _contender(), _contender()
    jitter = [0.0020, 0.0021, 0.0019, 0.0020, 0.0022, 0.0018]
    made = _clocked(monkeypatch, {yours: jitter, baseline: [0.471, 0.473], target: [0.00024, 0.00025]})
    inputs = [ex.spec.make_inputs(dict(ex.spec.benchmark.dims), np.random.default_rng(1))]
    samples = harness.measure(
        ex.spec, {"yours": yours, "baseline": baseline, "target": target}, inputs, cap_seconds=60, max_uncertainty=0.05
    )
    assert samples.sparse == ["baseline"]
    assert len(samples.seconds["baseline"]) == harness.SPARSE_ROUNDS
    assert len(samples.seconds["yours"]) == len(samples.seconds["target"]) == samples.rounds >= 10
    assert made.count(baseline) == harness.SPARSE_ROUNDS + 1  # and its warm-up
    speedup = samples.ratio("baseline", "yours")
    assert speedup.median == pytest.approx(0.472 / float(np.median(samples.seconds["yours"])))
    assert samples.ratio("target", "yours").count == samples.rounds  # still paired


@pytest.mark.parametrize("baseline_seconds", [[0.006], [0.030]], ids=["slower but short", "long but under 4x yours"])
def test_a_rival_that_is_short_or_near_yours_is_timed_every_round(monkeypatch, baseline_seconds):
    from grader.gpu import harness

    ex = tiny("vector_add", {"n": 300})
    yours, baseline, target = _contender(), _contender(), _contender()
    _clocked(monkeypatch, {yours: [0.010, 0.011], baseline: baseline_seconds, target: [0.004]})
    inputs = [ex.spec.make_inputs(dict(ex.spec.benchmark.dims), np.random.default_rng(1))]
    contenders = {"yours": yours, "baseline": baseline, "target": target}
    samples = harness.measure(ex.spec, contenders, inputs, cap_seconds=60, max_rounds=5)
    assert samples.sparse == [] and samples.rounds == 5
    assert len(samples.seconds["baseline"]) == len(samples.seconds["yours"]) == samples.rounds


def test_the_baseline_and_target_are_warmed_up_once_per_process_and_argument_types(monkeypatch):
    """A replayer's later checks launch the reference kernels it compiled and loaded already:
    no warm-up launch for them (yours gets one every check), until their arguments change type."""
    from grader.gpu import harness

    ex = tiny("vector_add", {"n": 300})
    baseline, target = _contender(), _contender()
    inputs = [ex.spec.make_inputs(dict(ex.spec.benchmark.dims), np.random.default_rng(1))]
    warm_ups = []
    for check in range(3):
        yours = _contender()
        made = _clocked(monkeypatch, {yours: [0.001], baseline: [0.002], target: [0.0005]})
        harness.measure(
            ex.spec, {"yours": yours, "baseline": baseline, "target": target}, inputs, min_rounds=1, cap_seconds=0
        )
        warm_ups.append([made.count(c) - 1 for c in (yours, baseline, target)])  # all but 1 round
    assert warm_ups == [[1, 1, 1], [1, 0, 0], [1, 0, 0]]
    longer = tiny("vector_add", {"n": 301})
    inputs = [longer.spec.make_inputs(dict(longer.spec.benchmark.dims), np.random.default_rng(1))]
    made = _clocked(monkeypatch, {yours: [0.001], baseline: [0.002], target: [0.0005]})
    contenders = {"yours": yours, "baseline": baseline, "target": target}
    harness.measure(longer.spec, contenders, inputs, min_rounds=1, cap_seconds=0)
    assert made.count(baseline) == 2, "arguments of another shape: warmed up again"


def test_a_sparse_rival_is_timed_once_per_check_once_its_buffers_hold_earlier_checks_times(monkeypatch):
    """A replayer's kept arena keeps a sparse rival's last POOLED times: its first check times
    the 471 ms baseline in SPARSE_ROUNDS rounds, each later one in the first round alone, and
    the speedup is the pool's median over yours. A new exercise's buffers start a new pool."""
    from grader.gpu import arena as arenas, harness

    arenas._kept.clear()
    monkeypatch.setattr(harness, "POOLED", 4)
    ex = tiny("vector_add", {"n": 300})
    baseline, target = _contender(), _contender()
    inputs = [ex.spec.make_inputs(dict(ex.spec.benchmark.dims), np.random.default_rng(1))]
    baseline_seconds = [0.470, 0.472, 0.500, 0.480, 0.490, 0.460, 0.471]
    timed_per_check = []
    for check in range(5):
        yours = _contender()
        made = _clocked(monkeypatch, {yours: [0.002], baseline: baseline_seconds[check:], target: [0.0003]})
        contenders = {"yours": yours, "baseline": baseline, "target": target}
        samples = harness.measure(ex.spec, contenders, inputs, cap_seconds=60, max_rounds=3, keep=(ex.id, 1))
        assert samples.sparse == ["baseline"]
        timed_per_check.append(len(samples.seconds["baseline"]))
        pooled = samples.all_seconds("baseline")
        assert samples.ratio("baseline", "yours").median == pytest.approx(float(np.median(pooled)) / 0.002)
        assert made.count(baseline) == timed_per_check[-1] + (check == 0)  # a warm-up at the first only
    assert timed_per_check == [harness.SPARSE_ROUNDS, 1, 1, 1, 1]
    assert len(pooled) == 4, "the last POOLED times"
    longer = tiny("vector_add", {"n": 301})
    yours = _contender()
    _clocked(monkeypatch, {yours: [0.002], baseline: [0.471], target: [0.0003]})
    inputs = [longer.spec.make_inputs(dict(longer.spec.benchmark.dims), np.random.default_rng(1))]
    contenders = {"yours": yours, "baseline": baseline, "target": target}
    samples = harness.measure(longer.spec, contenders, inputs, cap_seconds=60, max_rounds=3, keep=("x", 1))
    assert len(samples.seconds["baseline"]) == harness.SPARSE_ROUNDS and samples.earlier == {}
    arenas._kept.clear()


def test_a_check_whose_kernel_changed_the_inputs_leaves_no_time_in_the_pool(monkeypatch):
    """A sparse rival timed on inputs a kernel wrote into is not kept for the next check."""
    from grader.gpu import arena as arenas, harness

    arenas._kept.clear()
    ex = tiny("vector_add", {"n": 300})
    baseline, target = _contender(), _contender()
    inputs = [ex.spec.make_inputs(dict(ex.spec.benchmark.dims), np.random.default_rng(1))]
    contenders = {"yours": _contender(), "baseline": baseline, "target": target}
    _clocked(monkeypatch, {contenders["yours"]: [0.002], baseline: [0.9], target: [0.0003]})

    def changed(self):
        raise arenas.InputsChanged("x")

    with monkeypatch.context() as patched:
        patched.setattr(arenas.Arena, "require_intact_inputs", changed)
        with pytest.raises(arenas.InputsChanged):
            harness.measure(ex.spec, contenders, inputs, cap_seconds=60, max_rounds=3, keep=(ex.id, 1))
    contenders["yours"] = _contender()
    _clocked(monkeypatch, {contenders["yours"]: [0.002], baseline: [0.471], target: [0.0003]})
    samples = harness.measure(ex.spec, contenders, inputs, cap_seconds=60, max_rounds=3, keep=(ex.id, 1))
    assert samples.earlier == {} and samples.all_seconds("baseline") == [0.471] * harness.SPARSE_ROUNDS
    arenas._kept.clear()


def test_long_launches_settle_in_the_rounds_that_always_run(monkeypatch):
    """A naive matrix product's 100 ms launches vary by a ten-thousandth: three rounds tell their
    ratios, where ten would take the time cap. Short launches still need ten pairs."""
    from grader.gpu import harness

    ex = tiny("vector_add", {"n": 300})
    inputs = [ex.spec.make_inputs(dict(ex.spec.benchmark.dims), np.random.default_rng(1))]
    for scale, rounds in ((1.0, harness.MIN_ROUNDS), (0.01, harness.MIN_PAIRS_TO_SETTLE)):
        yours, baseline, target = _contender(), _contender(), _contender()
        _clocked(
            monkeypatch,
            {yours: [0.1 * scale, 0.10001 * scale], baseline: [0.14 * scale], target: [0.099 * scale, 0.09901 * scale]},
        )
        contenders = {"yours": yours, "baseline": baseline, "target": target}
        samples = harness.measure(ex.spec, contenders, inputs, cap_seconds=60)
        assert samples.sparse == [] and samples.rounds == rounds
        assert samples.stop_reason.startswith("median ratios known")


def test_which_rivals_were_timed_sparsely_reaches_the_grading_process(tmp_path):
    """The replayer's speed.json says which rivals it timed in the first rounds only, so the
    grading process takes their ratio as it was measured (median over median)."""
    import json

    from grader.children.folder import read_samples

    seconds = {"yours": [0.002, 0.0021, 0.0019, 0.002], "baseline": [0.47, 0.472], "target": [0.00024] * 4}
    speed = {"seconds": seconds, "after_end_seconds": seconds, "checked": [], "rounds": 4, "stop_reason": ""}
    (tmp_path / "speed.json").write_text(json.dumps({**speed, "sparse": ["baseline"]}))
    samples = read_samples(tmp_path)
    assert samples.sparse == ["baseline"]
    assert samples.ratio("baseline", "yours").median == pytest.approx(0.471 / 0.002)
    earlier = {"baseline": [0.49, 0.49, 0.49]}
    (tmp_path / "speed.json").write_text(json.dumps({**speed, "sparse": ["baseline"], "earlier": earlier}))
    samples = read_samples(tmp_path)
    assert samples.ratio("baseline", "yours").median == pytest.approx(0.49 / 0.002), "the pool's median"


def test_the_gpu_is_held_until_a_launch_of_many_kernels_is_all_queued(monkeypatch):
    """A launch that takes the host 1 ms to queue (a scan's levels) is timed behind a hold of
    three times that, so the events time the GPU's kernels back to back and not the host's
    pace; a quick launch keeps the 0.2 ms hold. Yours is measured from its warm-up on; a rival
    launched at an earlier check starts from what it took then."""
    from grader.gpu import harness

    ex = tiny("vector_add", {"n": 300})
    yours, baseline, target = _contender(), _contender(), _contender()
    queue_seconds = {yours: 0.001, baseline: 0.00005, target: 0.004}
    held = {yours: [], baseline: [], target: []}

    def timed_launch(launch, kwargs, arena, flush, hold_microseconds=harness.HOLD_MICROSECONDS):
        held[launch].append(hold_microseconds)
        return 0.002, 0.0, queue_seconds[launch]

    monkeypatch.setattr(harness, "_timed_launch", timed_launch)
    _unvaried(monkeypatch)
    inputs = [ex.spec.make_inputs(dict(ex.spec.benchmark.dims), np.random.default_rng(1))]
    contenders = {"yours": yours, "baseline": baseline, "target": target}
    harness.measure(ex.spec, contenders, inputs, min_rounds=3, max_rounds=3, cap_seconds=60)
    assert held[yours][1:] == [3000] * 3, "its warm-up's 1 ms, then its timed launches'"
    assert held[baseline][1:] == [harness.HOLD_MICROSECONDS] * 3
    assert held[target][1:] == [12000] * 3
    for launch in held:
        held[launch].clear()
    queue_seconds[target] = 0.010  # slower now: the hold follows, up to its cap
    harness.measure(ex.spec, contenders, inputs, min_rounds=3, max_rounds=3, cap_seconds=60)
    assert held[target] == [12000, harness.MAX_HOLD_MICROSECONDS, harness.MAX_HOLD_MICROSECONDS]


def test_when_every_rival_is_sparse_the_rounds_stop_once_yours_is_known(monkeypatch):
    """Yours far faster than the baseline and the target (a kernel 40 times the target's speed
    is possible only by luck or a trick, and is then checked like any other): both rivals are
    timed in the first rounds, yours until its own median is known to ±1%."""
    from grader.gpu import harness

    ex = tiny("vector_add", {"n": 300})
    yours, baseline, target = _contender(), _contender(), _contender()
    _clocked(monkeypatch, {yours: [0.0010, 0.00101, 0.00099], baseline: [0.100], target: [0.040]})
    inputs = [ex.spec.make_inputs(dict(ex.spec.benchmark.dims), np.random.default_rng(1))]
    contenders = {"yours": yours, "baseline": baseline, "target": target}
    samples = harness.measure(ex.spec, contenders, inputs, cap_seconds=60, max_rounds=50)
    assert samples.sparse == ["baseline", "target"]
    assert samples.rounds == harness.MIN_PAIRS_TO_SETTLE and samples.stop_reason.startswith("median ratios known")
    assert samples.ratio("target", "yours").median == pytest.approx(40, rel=0.02)


def _timed(yours: list) -> "object":
    from grader.gpu.harness import Samples

    n = len(yours)
    seconds = {"yours": yours, "baseline": [0.020] * n, "target": [0.005] * n}
    return Samples(seconds, {k: [0.0] * n for k in seconds}, [], n, "")


def test_a_kernel_fast_only_after_the_rounds_that_may_be_checked_gains_at_most_five_percent():
    """The checked launch is drawn from the first rounds (they always run); a kernel that keeps
    a count on the device can do the work there and return at once after. Its later launches
    count no faster than 5% under the first rounds' median, and the result says so."""
    ex = tiny("vector_add", {"n": 300})
    honest, _ = evaluate(ex, 5, _timed([0.010] * 15), CEILINGS)
    cheat, _ = evaluate(ex, 5, _timed([0.010] * 3 + [0.001] * 12), CEILINGS)
    assert honest.details.speedup_vs_baseline.median == pytest.approx(2.0)
    assert not honest.details.faster_later
    assert cheat.details.speedup_vs_baseline.median == pytest.approx(2.0 * 1.05)
    assert cheat.details.faster_later and "counted at most 5% faster" in cheat.details.summary


def test_a_kernel_whose_later_rounds_jitter_a_little_faster_keeps_its_figures():
    ex = tiny("vector_add", {"n": 300})
    jitter = [0.0100, 0.0101, 0.0099] + [0.0098, 0.0099, 0.0097, 0.0098] * 3
    speed, _ = evaluate(ex, 5, _timed(jitter), CEILINGS)
    assert not speed.details.faster_later
    assert speed.details.speedup_vs_baseline.median == pytest.approx(0.020 / 0.0098)


def test_an_oracle_process_that_dies_leaves_the_answer_to_this_process(monkeypatch):
    """An oracle process killed mid-check (out of memory, say): the expected output is computed
    here instead, and the next check gets a new process."""
    from grader.gpu import speed

    ex = tiny("saxpy", {"n": 5000})
    check = speed.new_check()
    first = speed.expected_elsewhere(ex, 11, check).result(timeout=120)
    for oracle in list(speed._idle_oracles.queue):
        oracle.proc.kill()
        oracle.proc.wait()
    again = speed.expected_elsewhere(ex, 11, check).result(timeout=120)
    assert np.array_equal(first.expected["out"], again.expected["out"])
    while any(o.proc.poll() is not None for o in speed._idle_oracles.queue):  # every dead one met
        speed.expected_elsewhere(ex, 11, check).result(timeout=120)
    speed.expected_elsewhere(ex, 11, check).result(timeout=120)
    assert speed._idle_oracles.queue and all(o.proc.poll() is None for o in speed._idle_oracles.queue)


def test_a_timed_output_judged_at_the_picks_an_oracle_process_sent_is_judged_as_against_the_whole(
    tmp_path, monkeypatch
):
    """What an oracle process sends (the expected values at the picked elements) judges the
    child's sampled timed output exactly as the whole expected output does: right when it is
    right, wrong at the element that is wrong."""
    from grader.children.folder import read_samples
    from grader.children.roles.replay import _time_submission
    from grader.gpu import speed
    from grader.sentinels import PAD
    from grader.steps import judge

    monkeypatch.setattr(judge, "SAMPLED", 50)
    ex = tiny("vector_add", {"n": 300})
    check = [1, 0, 99]
    _time_submission(tmp_path, {"seed": 5, "check": check}, ex, solution(ex), {})
    samples = read_samples(tmp_path)
    at_picks = speed.expected_at_picks(ex.id, {"n": 300}, 5, tuple(check))
    whole = expected_for_check(ex, 5, check)
    for expected in (whole, at_picks):
        _, wrong = evaluate(ex, 5, samples, CEILINGS, expected=(tuple(check), expected))
        assert wrong is None
    samples.checked[0][3]["c"][PAD + 7] += 1.0
    said = [evaluate(ex, 5, samples, CEILINGS, expected=(tuple(check), e))[1] for e in (whole, at_picks)]
    assert said[0] and said[0] == said[1]


POINTWISE_DIMS = {
    "vector_add": {"n": 3001},
    "saxpy": {"n": 3001},
    "rgb_to_gray": {"h": 37, "w": 53},
    "transpose": {"m": 37, "n": 61},
}


@pytest.mark.parametrize("exercise_id", sorted(POINTWISE_DIMS))
def test_a_pointwise_exercises_expected_output_at_the_picks_is_the_whole_oracles(monkeypatch, exercise_id):
    """A pointwise exercise's oracle runs on the inputs at the judged elements alone (each varied
    as the checked launch's were): the same values and tolerances, to the bit, as the whole
    oracle's at those elements. An exercise wrongly declared pointwise fails here."""
    from grader.gpu import speed
    from grader.steps import judge

    assert {e.id for e in ladder() if e.spec.pointwise} == set(POINTWISE_DIMS)
    monkeypatch.setattr(judge, "SAMPLED", 40)
    dims = POINTWISE_DIMS[exercise_id]
    ex = tiny(exercise_id, dims)
    for check in ((0, 0, 7), (2, 0, 123456789)):
        at_picks = speed.expected_at_picks(exercise_id, dims, 5, check, base_seed=9)
        _, expected, tolerance = expected_for_check(ex, 5, check, base_seed=9)
        for out in ex.spec.outputs:
            picked = judge.picks(int(np.prod(out.shape_for(dims))), check[2])
            assert len(picked) == 40
            want, within = judge.taken_at(expected[out.name], tolerance[out.name], picked)
            assert at_picks.expected[out.name].tobytes() == want.tobytes()
            assert np.array_equal(np.asarray(at_picks.tolerance[out.name]), within)


def test_no_oracle_process_to_be_had_means_the_answer_here_and_no_slot_lost(monkeypatch):
    from grader.gpu import speed

    def cannot_start():
        raise OSError("no more processes")

    monkeypatch.setattr(speed, "_Oracle", cannot_start)
    monkeypatch.setattr(speed, "_idle_oracles", __import__("queue").Queue())
    monkeypatch.setattr(speed, "_oracles_started", [0])
    ex = tiny("saxpy", {"n": 5000})
    for _ in range(speed.ORACLE_PROCESSES + 1):  # more than there are slots: none waits forever
        answer = speed.expected_elsewhere(ex, 11, speed.new_check()).result(timeout=60)
        assert answer.expected["out"].size == 5000
    assert speed._oracles_started == [0]


def test_an_oracle_processs_own_error_is_the_checks_and_the_process_serves_on():
    """A request the oracle process cannot answer (here an exercise that does not exist) is an
    error for that check alone: the speed section says the expected output could not be
    computed, and the same process answers the next check."""
    from types import SimpleNamespace

    from grader.gpu import speed

    ex = tiny("saxpy", {"n": 5000})
    speed.expected_elsewhere(ex, 11, speed.new_check()).result(timeout=120)
    started = speed._oracles_started[0]
    unknown = SimpleNamespace(id="no_such_exercise", spec=ex.spec)
    with pytest.raises(RuntimeError, match="no_such_exercise"):
        speed.expected_elsewhere(unknown, 11, speed.new_check()).result(timeout=120)
    speed.expected_elsewhere(ex, 11, speed.new_check()).result(timeout=120)
    assert speed._oracles_started[0] == started

"""The GPU timing harness, run on Numba's simulator at tiny sizes: interleaving, fresh inputs
every round, sampled output checks rebuilt in the grading process. (The times themselves mean
nothing here; tests/test_gpu.py checks them on a real GPU.)"""

from dataclasses import replace

import numpy as np
import pytest
from numba import cuda

from grader.exercises import exercise
from grader.gpu.harness import variant_for, vary_on_device, vary_on_host
from grader.steps.load import load_launch
from grader.gpu.speed import collect, evaluate

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


def test_the_grading_process_computes_the_checked_launchs_expected_output_ahead():
    """check_file picks the timed launch to check and computes its expected output while the
    child runs: the same answer as computing it afterwards."""
    from grader.checking.pipeline import _expected_in_background
    from grader.gpu.speed import expected_for_check

    ex = tiny("saxpy", {"n": 50})
    check_at, future = _expected_in_background(ex, 11, None)
    inputs, expected, tolerance = future.result(timeout=30)
    again = expected_for_check(ex, 11, check_at)
    assert np.array_equal(inputs["x"], again[0]["x"]) and np.array_equal(expected["out"], again[1]["out"])


def test_without_turns_the_phases_are_what_they_were():
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
    assert not samples.turns
    assert "held it alone" not in evaluate(ex, 5, samples, CEILINGS)[0].details.method


def test_with_turns_warm_ups_share_the_gpu_and_the_timed_rounds_have_it_alone():
    """Inputs to the device and warm-ups under a shared turn, the timed rounds under the
    exclusive one, each let go before the next is asked for; the waits are phases of their own."""
    from grader.gpu.harness import WAITING_EXCLUSIVE, WAITING_SHARED
    from grader.gpu.turns import TurnFolder

    ex = tiny("vector_add", {"n": 300})
    folder = TurnFolder()
    turns = folder.turns(0)
    seen = []
    real = solution(ex)

    def launch(**kwargs):
        seen.append(turns.held)
        real(**kwargs)

    try:
        samples = collect(ex, launch, seed=5, min_rounds=2, cap_seconds=0.0, turns=turns)
    finally:
        turns.close()
        folder.remove()
    assert turns.log == [("shared", "take"), ("shared", "leave"), ("exclusive", "take"), ("exclusive", "leave")]
    assert seen[0] == "shared" and set(seen[1:]) == {"exclusive"}  # the warm-up, then every timed launch
    assert list(samples.phases)[1:3] == [WAITING_SHARED, "inputs to device"]
    assert WAITING_EXCLUSIVE in samples.phases and samples.turns
    speed, wrong = evaluate(ex, 5, samples, CEILINGS)
    assert wrong is None and "held it alone" in speed.details.method


def test_a_grading_childs_timing_takes_its_turns_and_its_parent_reads_them_back(tmp_path, monkeypatch):
    """The child's timing step (what a GPU child runs, here at a tiny size) hands its turns to
    the harness, and the parent reads back that the timed rounds had the GPU alone."""
    from contextlib import nullcontext
    from types import SimpleNamespace

    from grader.checking import child, isolate
    from grader.gpu.harness import WAITING_EXCLUSIVE
    from grader.gpu.turns import TurnFolder

    monkeypatch.setattr(child, "GUARD", SimpleNamespace(writing=nullcontext))
    ex = tiny("vector_add", {"n": 300})
    folder = TurnFolder()
    turns = folder.turns(0)
    try:
        before = {"child: waiting for the GPU": 0.0, "child: correctness cases": 0.1}
        child._time_submission(tmp_path, {"seed": 5, "check": [1, 0]}, ex, solution(ex), before, turns)
    finally:
        turns.close()
        folder.remove()
    samples = isolate._read_samples(tmp_path)
    assert not isinstance(samples, str), samples
    assert samples.turns and [k for k, _ in turns.log] == ["shared", "shared", "exclusive", "exclusive"]
    assert list(samples.phases)[:2] == list(before) and WAITING_EXCLUSIVE in samples.phases
    assert [(name, r) for name, r, _, _ in samples.checked] == [("yours", 1)]

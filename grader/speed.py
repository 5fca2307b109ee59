"""The speed step of the pipeline (GPU only): collect paired times, then judge them.

`collect` runs where the kernels run (this process, or the child); `evaluate` runs in the
grading process: it regenerates the benchmark inputs from the seed, checks the sampled
timed outputs against the oracle itself, and turns times into ratios, throughput, tier and
points against this device's measured ceilings.
"""
from __future__ import annotations

import random

import numpy as np

from grader import timing
from grader.cases import case_rng
from grader.gpu_timing import Samples, hidden_work, measure, variant_for, vary_on_host
from grader.judge import judge_case
from grader.result import Speed
from grader.run import Outcome
from grader.spec import Case

INPUT_SETS = 2
BENCH_CASE_INDEX = 1000
"""Benchmark inputs draw from their own streams, apart from the correctness cases'."""

METHOD = (
    "CUDA events around each launch, then a device-wide synchronize; 2 warm-up launches each; "
    "L2 flushed (256 MiB copy) before every timed launch of a memory-bound kernel; yours, the "
    "baseline and the target interleaved in rotating order on {sets} input sets, each round's "
    "inputs rotated and sign-flipped (or offset) so no launch sees inputs seen before, "
    "outputs poisoned before every launch; repeated until the pairwise ratios' interquartile "
    "range is within 2% or 4 s pass; figures are medians; {checked} timed outputs checked "
    "against the oracle."
)


def benchmark_inputs(ex, seed: int, secret=None) -> list[dict]:
    dims = dict(ex.spec.benchmark.dims)
    return [ex.spec.make_inputs(dims, case_rng(seed, BENCH_CASE_INDEX + k, secret))
            for k in range(INPUT_SETS)]


def collect(ex, launch, seed: int, secret=None, **options) -> Samples:
    contenders = {"yours": launch, "baseline": ex.baseline, "target": ex.target}
    return measure(ex.spec, contenders, benchmark_inputs(ex, seed, secret), variant_seed=seed,
                   flush=ex.spec.benchmark.bound == "memory", rng=random.SystemRandom(), **options)


def _check_timed_outputs(ex, seed, samples: Samples, secret=None) -> str | None:
    """A learner message if any sampled timed run of yours was wrong."""
    mine = [(r, s, bufs) for name, r, s, bufs in samples.checked if name == "yours"]
    if not mine:
        return None
    input_sets = benchmark_inputs(ex, seed, secret)
    case = Case("benchmark size", dict(ex.spec.benchmark.dims))
    for round_index, set_index, buffers in mine:
        inputs = dict(input_sets[set_index])
        for array in ex.spec.inputs:  # rebuild exactly what this launch was given
            variant = variant_for(seed, round_index, set_index, array.name, inputs[array.name])
            inputs[array.name] = vary_on_host(inputs[array.name], variant)
        expected = ex.oracle(**inputs)
        tolerance = {k: ex.spec.tolerance(inputs, np.asarray(v)) for k, v in expected.items()}
        result = judge_case(ex.spec, case, Outcome(buffers, None, 0.0), expected, tolerance)
        if not result.passed:
            return f"A timed run at the benchmark size gave a wrong answer: {result.message}"
    return None


def evaluate(ex, seed: int, samples: Samples, ceilings: dict, secret=None) -> tuple[Speed, str | None]:
    """(speed section, message when a timed output was wrong)."""
    bench = ex.spec.benchmark
    dims = dict(bench.dims)
    wrong = _check_timed_outputs(ex, seed, samples, secret)
    yours = samples.seconds["yours"]
    hidden = hidden_work(yours, samples.host_seconds["yours"])
    if hidden:  # work escaped the events: the host clock is the honest figure
        yours = samples.host_seconds["yours"]
    speedup = timing.paired_ratio(samples.seconds["baseline"], yours)
    of_target = timing.paired_ratio(samples.seconds["target"], yours)
    median = float(np.median(yours))
    bytes_moved, flops = bench.bytes_moved(dims), bench.flops(dims)
    floor = timing.floor_seconds(bytes_moved, flops, ceilings)
    impossible = timing.below_floor(median, floor)
    tier, points = timing.tier_reached(of_target.median, bench.tiers)
    meets = speedup.median >= bench.required_speedup
    if impossible or hidden or not meets:
        tier, points = None, 0
    rate = timing.throughput(bench.bound, bytes_moved, flops, median, ceilings)
    details = {
        "device": ceilings.get("name"), "dims": dims, "bound": bench.bound,
        "yours_ms": median * 1e3,
        "baseline_ms": float(np.median(samples.seconds["baseline"])) * 1e3,
        "target_ms": float(np.median(samples.seconds["target"])) * 1e3,
        "speedup_vs_baseline": vars(speedup) | {"spread": speedup.spread},
        "fraction_of_target": vars(of_target) | {"spread": of_target.spread},
        "throughput": rate,
        "ceilings": {"copy_bandwidth_GBps": ceilings.get("copy_bandwidth", 0) / 1e9,
                     "fp32_TFLOPs": ceilings.get("fp32_flops", 0) / 1e12},
        "floor_ms": floor * 1e3, "below_floor": impossible, "hidden_work": hidden,
        "faster_than_target_warning": of_target.median > timing.TARGET_WARNING,
        "required_speedup": bench.required_speedup, "meets_requirement": meets,
        "tier": tier, "points": points, "max_points": timing.max_speed_points(bench.tiers),
        "rounds": samples.rounds, "stop_reason": samples.stop_reason,
        "method": METHOD.format(sets=INPUT_SETS, checked=sum(1 for c in samples.checked if c[0] == "yours")),
    }
    details["summary"] = summary_line(details)
    return Speed(measured=True, details=details), wrong


def summary_line(d: dict) -> str:
    rate = d["throughput"]
    frac = rate["fraction_of_ceiling"]
    parts = [
        f"Speed: {d['yours_ms']:.3f} ms at {_fmt_dims(d['dims'])};",
        f"{d['speedup_vs_baseline']['median']:.2f}x the baseline "
        f"(IQR {d['speedup_vs_baseline']['low']:.2f}–{d['speedup_vs_baseline']['high']:.2f}),",
        f"{d['fraction_of_target']['median']:.0%} of the target's speed;",
        f"{rate['achieved']:.1f} {rate['unit']}" + (f" = {frac:.0%} of this GPU's measured ceiling." if frac else "."),
    ]
    if d["below_floor"]:
        parts.append(f"REJECTED: faster than physically possible (floor {d['floor_ms']:.3f} ms).")
    elif d["hidden_work"]:
        parts.append("Work ran outside the timed region (another stream?): timed by the host clock, no speed points.")
    elif not d["meets_requirement"]:
        parts.append(f"Needs {d['required_speedup']:.2f}x the baseline: too slow for now.")
    else:
        parts.append(f"Tier: {d['tier'] or 'none yet'} ({d['points']}/{d['max_points']} speed points).")
    if d["faster_than_target_warning"]:
        parts.append("Warning: over 1.5x faster than our best kernel — please tell us how!")
    return " ".join(parts)


def _fmt_dims(dims: dict) -> str:
    return "×".join(str(v) for v in dims.values())

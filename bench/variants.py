"""Candidate target kernels, timed against the current target by the grader's own harness.

    python bench/variants.py [--only transpose,histogram] [--candidates FILE.py] [--out variants.json]

Where a bundled target misses its goal (docs/BENCHMARKS.md), a new idea is written in a
candidates file (a module defining `VARIANTS = {exercise_id: {name: launch}}`), checked against
the oracle at a modest size, then timed interleaved with the current target at the benchmark
size (L2 flushed, fresh inputs each round). A winner moves into kernels/<id>.py. Without a
candidates file the target is timed beside the bundled solution, the baseline and the library
peers. Names starting with probe_ are not correct kernels: they are timed without the check,
to find what bounds a target (a plain copy of the same bytes, a histogram without its atomics).

The candidates tried until 2026-11-30 (about 1,200 lines: transposes, histograms, stencils,
softmaxes, grays) are kept at the git tag `bench-variants-archive` (commit a21df83), with the
figures docs/BENCHMARKS-LOG.md quotes; those of 2026-12-01 (scan, warp_reduce, softmax_fused,
matmul_tiled) at commit a80519f, with the figures docs/BENCHMARKS.md quotes.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("ZEROGPU_BACKEND", "gpu")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grader  # noqa: E402,F401 - chooses the back end before numba loads
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

from grader.authoring.spec import Case  # noqa: E402
from grader.backend import current  # noqa: E402
from grader.exercises import LADDER, exercise  # noqa: E402
from grader.gpu import statistics  # noqa: E402
from grader.gpu.ceilings import ceilings  # noqa: E402
from grader.gpu.harness import measure  # noqa: E402
from grader.gpu.speed import benchmark_inputs  # noqa: E402
from grader.steps.cases import case_rng, expected_and_tolerance  # noqa: E402
from grader.steps.execute import execute  # noqa: E402
from grader.steps.judge import judge_case  # noqa: E402
from grader.steps.load import load_launch  # noqa: E402

import peers  # noqa: E402  (bench/peers.py)


def sm_count() -> int:
    """The GPU's multiprocessors, for candidates that size their grid by it (1 on the simulator)."""
    if current() != "gpu":
        return 1
    return cuda.get_current_device().MULTIPROCESSOR_COUNT


BUNDLED = {exercise_id: {"baseline": "baseline", "solution": None} for exercise_id in LADDER}
BUNDLED["reduce_sum"]["cupy.sum"] = "peer"
BUNDLED["warp_reduce"]["cupy.sum"] = "peer"
BUNDLED["scan"]["cupy.cumsum"] = "peer"
BUNDLED["transpose"]["torch a.T copy"] = "peer"
BUNDLED["matmul_tiled"]["cupy.matmul"] = "peer"


def load_candidates(path: str | None) -> dict:
    if not path:
        return BUNDLED
    spec = importlib.util.spec_from_file_location("zerogpu_candidates", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.VARIANTS


def correct(ex, launch, dims, seed=3) -> str:
    """'ok' or what went wrong, at `dims`: one run judged exactly as a grading case is."""
    inputs = ex.spec.make_inputs(dims, case_rng(seed, 0))
    outcome = execute(ex.spec, launch, inputs, dims)
    result = judge_case(ex.spec, Case("candidate", dims), outcome, *expected_and_tolerance(ex, inputs))
    return "ok" if result.passed else f"{result.verdict}: {result.message}"[:200]


def run_exercise(exercise_id, variants, check_dims, ceil):
    ex = exercise(exercise_id)
    bench = ex.spec.benchmark
    dims = dict(bench.dims)
    rows = []
    candidates = {"target": ex.target}
    for name, launch in variants.items():
        if launch == "baseline":
            launch = ex.baseline
        if launch is None:  # the bundled solution
            launch = load_launch(ex.spec, ex.solution_file.read_text(), str(ex.solution_file))
        if launch == "peer":  # timed beside the others in the same harness
            launch = peers.peer_launch(name)
            if launch is None:
                continue
        if name.startswith("probe_"):  # timing only: computes something else on purpose
            candidates[name] = launch
            continue
        verdict = correct(ex, launch, check_dims)
        print(f"  {exercise_id}/{name}: {verdict}", flush=True)
        if verdict == "ok":
            candidates[name] = launch
        else:
            rows.append({"exercise": exercise_id, "variant": name, "error": verdict})
    if not check_on_gpu():
        return rows
    samples = measure(ex.spec, candidates, benchmark_inputs(ex, 1), flush=bench.bound != "compute", cap_seconds=4.0)
    bytes_moved, flops = bench.bytes_moved(dims), bench.flops(dims)
    for name, secs in samples.seconds.items():
        ms = float(np.median(secs)) * 1e3
        rate = statistics.throughput(bench.bound, bytes_moved, flops, ms / 1e3, ceil)
        # candidate time ÷ target time, median over interleaved pairs: below 1 is faster than the
        # target (the key keeps its old name, speed_vs_target)
        vs = samples.ratio(name, "target")
        rows.append(
            {
                "exercise": exercise_id,
                "variant": name,
                "ms": ms,
                "rate": rate["achieved"],
                "unit": rate["unit"],
                "of_ceiling": rate["fraction_of_ceiling"],
                "speed_vs_target": vs.median,
            }
        )
    return rows


def check_on_gpu() -> bool:
    return current() == "gpu"


# Even sizes where a candidate needs them (word views), never multiples of a block or tile;
# the histogram's large enough for the grid-stride loops of its candidates to take many steps.
SMALL = {
    "thread_ids": {"n": 5003},
    "vector_add": {"n": 5003},
    "saxpy": {"n": 5003},
    "rgb_to_gray": {"h": 36, "w": 130},
    "transpose": {"m": 70, "n": 130},
    "stencil_1d": {"n": 3000},
    "softmax_fused": {"rows": 5, "cols": 3000},
    "histogram": {"n": 4099},
    "reduce_sum": {"n": 5000},
    "matmul_tiled": {"m": 33, "k": 20, "n": 17},
    "warp_reduce": {"n": 5000},
    "scan": {"n": 17011},
}
LARGE = {
    "thread_ids": {"n": 1_000_003},
    "vector_add": {"n": 1_000_003},
    "saxpy": {"n": 1_000_003},
    "rgb_to_gray": {"h": 1030, "w": 2052},
    "transpose": {"m": 1030, "n": 2050},
    "stencil_1d": {"n": 1_000_003},
    "softmax_fused": {"rows": 67, "cols": 8192},
    "histogram": {"n": 20_000_003},
    "reduce_sum": {"n": 1_000_003},
    "matmul_tiled": {"m": 257, "k": 300, "n": 129},
    "warp_reduce": {"n": 1_000_003},
    "scan": {"n": 3_000_017},  # hundreds of tiles: the look-back goes back many windows
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="")
    parser.add_argument("--candidates", help="a module defining VARIANTS = {exercise_id: {name: launch}}")
    parser.add_argument("--out", default="bench/results/variants.json")
    args = parser.parse_args()
    variants = load_candidates(args.candidates)
    ids = args.only.split(",") if args.only else list(variants)
    ceil = {}
    if check_on_gpu():
        ceil = ceilings()
    rows = []
    for exercise_id in ids:
        t0 = time.perf_counter()
        sizes = LARGE if check_on_gpu() else SMALL
        check_dims = sizes.get(exercise_id) or dict(exercise(exercise_id).spec.cases[-1].dims)
        rows += run_exercise(exercise_id, variants[exercise_id], check_dims, ceil)
        print(f"{exercise_id}: {time.perf_counter() - t0:.1f} s", flush=True)
    for r in rows:
        if "error" in r:
            print(f"{r['exercise']:<14}{r['variant']:<20} FAILED {r['error']}")
        else:
            print(
                f"{r['exercise']:<14}{r['variant']:<20}{r['ms']:9.3f} ms {r['rate']:9.1f} {r['unit']:<8}"
                f"{(r['of_ceiling'] or 0):6.0%}  {r['speed_vs_target']:.3f}× the target's time"
            )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"date": time.strftime("%Y-%m-%d"), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()

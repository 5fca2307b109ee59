"""Benchmark every exercise on a GPU: baseline / target / solution, peers and ceilings.

    python bench/run.py [--out results.json] [--only id,id]

Prints one table and writes a JSON with every figure. Uses the grader's own timing harness
(grader/gpu/harness.py), so the figures are the ones learners are graded against. A library
peer that takes the exercise's own arguments (bench/peers.py, SAME_SIGNATURE) is timed in the
same harness, interleaved with the target, and tgt/peer is the median of their paired ratios
(marked * in the table); the others are timed on their own, warm and without the L2 flush.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault("ZEROGPU_BACKEND", "gpu")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from grader.gpu import statistics as timing  # noqa: E402
from grader.gpu.ceilings import ceilings as measure_ceilings  # noqa: E402
from grader.exercises import LADDER, exercise  # noqa: E402
from grader.gpu.harness import measure  # noqa: E402
from grader.steps.load import load_launch  # noqa: E402
from grader.gpu.speed import benchmark_inputs  # noqa: E402

import numba  # noqa: E402 - after grader: the back end first
import numba_cuda  # noqa: E402
import peers  # noqa: E402  (bench/peers.py)


def solution_launch(ex):
    return load_launch(ex.spec, ex.solution_file.read_text(), str(ex.solution_file))


def bench_exercise(ex, ceil, seed=1):
    spec, bench = ex.spec, ex.spec.benchmark
    dims = dict(bench.dims)
    t0 = time.perf_counter()
    inputs = benchmark_inputs(ex, seed)
    contenders = {"solution": solution_launch(ex), "baseline": ex.baseline, "target": ex.target}
    peer_name = peers.SAME_SIGNATURE.get(ex.id)
    peer_launch = peers.peer_launch(peer_name) if peer_name else None
    if peer_launch:  # interleaved with the target: the same flush, inputs and rounds
        contenders["peer"] = peer_launch
    samples = measure(spec, contenders, inputs, flush=bench.bound != "compute", cap_seconds=6.0)
    ms = {k: float(np.median(v)) * 1e3 for k, v in samples.seconds.items()}
    bytes_moved, flops = bench.bytes_moved(dims), bench.flops(dims)
    rates = {k: timing.throughput(bench.bound, bytes_moved, flops, v / 1e3, ceil) for k, v in ms.items()}
    if peer_launch:
        peer = {"name": peer_name, "ms": ms.pop("peer"), "timed": "interleaved with the target"}
        rates.pop("peer")
    else:
        peer = peers.time_peer(ex.id, inputs[0], dims)
    row = {
        "exercise": ex.id,
        "dims": dims,
        "bound": bench.bound,
        "ms": ms,
        "throughput": rates,
        "solution_speedup_vs_baseline": vars(samples.ratio("baseline", "solution")),
        "solution_fraction_of_target": vars(samples.ratio("target", "solution")),
        "baseline_fraction_of_target": vars(samples.ratio("target", "baseline")),
        "target_speedup_vs_baseline": vars(samples.ratio("baseline", "target")),
        "required_speedup": bench.required_speedup,
        "rounds": samples.rounds,
        "stop_reason": samples.stop_reason,
        "peer": peer,
        "seconds": round(time.perf_counter() - t0, 2),
    }
    if peer_launch:  # the median of the interleaved pairs' ratios
        row["target_vs_peer"] = samples.ratio("peer", "target").median
    elif peer:
        row["target_vs_peer"] = peer["ms"] / ms["target"]
    return row


def versions() -> dict:
    out = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "numba_cuda": numba_cuda.__version__,
    }
    try:
        import cupy  # noqa: PLC0415 - optional: CuPy is timed where it is installed

        out["cupy"] = cupy.__version__
    except ImportError:
        pass
    return out


def print_table(rows, ceil):
    print(
        f"\nGPU {ceil['name']}, driver {ceil['driver']}: copy {ceil['copy_bandwidth'] / 1e9:.0f} GB/s, "
        f"fp32 FMA {ceil['fp32_flops'] / 1e12:.1f} TFLOP/s"
    )
    head = f"{'exercise':<14}{'base ms':>9}{'sol ms':>9}{'tgt ms':>9}{'sol/base':>9}{'sol%tgt':>8}{'tgt rate':>16}{'%ceil':>7}{'peer':>22}{'tgt/peer':>9}"
    print(head)
    for r in rows:
        t = r["throughput"]["target"]
        peer = r.get("peer") or {}
        print(
            f"{r['exercise']:<14}{r['ms']['baseline']:>9.3f}{r['ms']['solution']:>9.3f}{r['ms']['target']:>9.3f}"
            f"{r['solution_speedup_vs_baseline']['median']:>9.2f}{r['solution_fraction_of_target']['median']:>8.0%}"
            f"{t['achieved']:>10.1f} {t['unit']:<5}{(t['fraction_of_ceiling'] or 0):>7.0%}"
            f"{(peer.get('name', '-') + ' ' + format(peer.get('ms', 0), '.3f')) if peer else '-':>22}"
            f"{r.get('target_vs_peer', float('nan')):>9.3f}{'*' if peer.get('timed') else ''}"
        )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="bench/results/latest.json")
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    ids = args.only.split(",") if args.only else list(LADDER)
    ceil = measure_ceilings(refresh=True)
    rows = []
    for exercise_id in ids:
        row = bench_exercise(exercise(exercise_id), ceil)
        rows.append(row)
        print(f"{exercise_id}: done in {row['seconds']} s", flush=True)
    peak = peers.cublas_sgemm_tflops()
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "ceilings": ceil,
        "versions": versions(),
        "cublas_sgemm_4096_tflops": peak,
        "rows": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1, default=float))
    print_table(rows, ceil)
    print(f"cuBLAS SGEMM 4096^2 (CuPy, TF32 off): {peak:.1f} TFLOP/s" if peak else "cuBLAS: not available")


if __name__ == "__main__":
    main()

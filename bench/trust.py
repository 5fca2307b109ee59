"""Can the GPU grade be trusted? Two measurements, printed as tables:

1. Grade every solution once through `check_file` (child process, JIT included): wall time.
2. Grade the same solutions N times in a row: max/min of the speedup over the baseline.

    python bench/trust.py [--repeats 5] [--only id,id] [--cold | --replayer] [--processes N] [--out trust.json]

By default a spare child process is started ahead of each check (grader/children/spares.py
keep_warm); --cold starts each check's process only when it is needed; --replayer grades as
`zerogpu grade` does on a GPU host: graded, every check replayed by the GPU's one replayer
(grader/children/replayers.py). --processes N runs the whole measurement in N fresh processes,
one after the other, and prints each exercise's spread across them (a fresh replayer each).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("ZEROGPU_BACKEND", "gpu")
os.environ.setdefault("ZEROGPU_SECRET", "trust-bench")  # --replayer grades: one secret for every process
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grader  # noqa: E402,F401
from grader.checking.check import check_file  # noqa: E402
from grader.exercises import LADDER, exercise  # noqa: E402
from grader.children.spares import keep_warm  # noqa: E402
from grader.children.replayers import replayers  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default="")
    parser.add_argument("--out", default="bench/results/trust.json")
    parser.add_argument(
        "--cold", action="store_true", help="no spare child started ahead (one process start per check)"
    )
    parser.add_argument("--replayer", action="store_true", help="graded, replayed by the GPU's one replayer")
    parser.add_argument("--processes", type=int, default=0, help="run it all in N fresh processes in turn")
    args = parser.parse_args()
    ids = args.only.split(",") if args.only else list(LADDER)
    if args.processes:
        across_processes(args)
    elif args.cold:
        measure(ids, args)
    elif args.replayer:
        with replayers():
            measure(ids, args)
    else:
        with keep_warm():  # as `zerogpu grade` checks a class
            measure(ids, args)


def across_processes(args) -> None:
    """Each exercise's speedups from N fresh processes, and their max/min across processes."""
    runs = []
    for k in range(args.processes):
        out = Path(args.out).with_suffix(f".process{k}.json")
        command = [sys.executable, __file__, "--repeats", str(args.repeats), "--out", str(out)]
        command += (["--only", args.only] if args.only else []) + (["--replayer"] if args.replayer else [])
        subprocess.run(command, check=True)
        runs.append(json.loads(out.read_text())["repeats"])
    print(f"\nAcross {args.processes} fresh processes:")
    for exercise_id in runs[0]:
        speedups = [s for run in runs for s in run[exercise_id]["speedups"] if s]
        if speedups:
            print(
                f"{exercise_id:<14} speedups {min(speedups):.3f}–{max(speedups):.3f}x, "
                f"max/min {max(speedups) / min(speedups):.4f}",
                flush=True,
            )


def grade(exercise_id, args):
    """One grading of the exercise's solution, as the options say."""
    graded = {"graded": True} if args.replayer else {}
    return check_file(exercise_id, exercise(exercise_id).solution_file, **graded)


def measure(ids, args):
    started = time.perf_counter()
    first = {}
    for exercise_id in ids:
        t0 = time.perf_counter()
        r = grade(exercise_id, args)
        first[exercise_id] = (r, time.perf_counter() - t0)
        print(
            f"{exercise_id:<14} {r.verdict:<10} {time.perf_counter() - t0:6.1f} s  {r.speed.to_dict()['details'].get('summary', r.speed.reason)}",
            flush=True,
        )
        phases = r.speed.to_dict()["details"].get("phase_seconds", {})
        rest = time.perf_counter() - t0 - sum(phases.values())
        print(
            " " * 15 + "phases: " + ", ".join(f"{k} {v:.2f} s" for k, v in phases.items()) + f"; the rest {rest:.2f} s",
            flush=True,
        )
    total = time.perf_counter() - started
    print(f"\nGrading all {len(ids)} solutions once (child processes, JIT included): {total:.1f} s wall")

    repeats = {}
    for exercise_id in ids:
        gradings = [first[exercise_id][0]] + [grade(exercise_id, args) for _ in range(args.repeats - 1)]
        details = [r.speed.to_dict()["details"] for r in gradings]  # as JSON: {} when not measured
        speedups = [d.get("speedup_vs_baseline", {}).get("median") for d in details]
        ok = [s for s in speedups if s]
        # the medians of each contender too: which one moved when a speedup moved
        repeats[exercise_id] = {
            "speedups": speedups,
            "max_over_min": max(ok) / min(ok) if ok else None,
            **{f"{who}_ms": [d.get(f"{who}_ms") for d in details] for who in ("yours", "baseline", "target")},
        }
        spread = repeats[exercise_id]["max_over_min"]
        verdicts = ", ".join(sorted({r.verdict for r in gradings}))
        print(
            f"{exercise_id:<14} speedups {', '.join(f'{s:.3f}' for s in ok)}  "
            + (f"max/min {spread:.3f}" if spread else f"no speedup ({verdicts}: {gradings[0].message[:120]})"),
            flush=True,
        )
        for who in ("yours", "baseline"):
            ms = [m for m in repeats[exercise_id][f"{who}_ms"] if m]
            print(f"{'':<14} {who:>8} ms {', '.join(f'{m:.4f}' for m in ms)}", flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        json.dumps(
            {
                "date": time.strftime("%Y-%m-%d"),
                "grade_all_seconds": total,
                "spare_children": not args.cold,
                "per_exercise_seconds": {k: v[1] for k, v in first.items()},
                "phase_seconds": {k: v[0].speed.to_dict()["details"].get("phase_seconds") for k, v in first.items()},
                "verdicts": {k: v[0].verdict for k, v in first.items()},
                "repeats": repeats,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()

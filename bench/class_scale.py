"""Grade a synthetic class and report checks per second: the stall test of class grading.

    python bench/class_scale.py [--students 24] [--repeats 5] [--workers N] [--out FILE.json]
                                [--scheduler local|tcp://HOST:8786] [--exercises vector_add,...]
                                [--all-exercises [--only ID,...]] [--timeout SECONDS]

The class mixes what a real one hands in, for vector_add and matmul_tiled: solutions, valid
alternatives (a grid-stride vector add, a matmul of 8 x 8 tiles), kernels without a bounds guard
(they write past their arrays on a GPU), off-by-one and square-only kernels, untouched starters,
students who handed in one exercise only, and a hostile file that calls os._exit. Each repeat
grades it from scratch (a new gradebook) in graded mode with the default workers (one per
GPU, or one per CPU core without a GPU) and checks that every (student, exercise) row arrived.
With --scheduler the same class is graded on a Dask cluster instead (docs/CLUSTER.md): `local`
starts one on this machine (--workers of them), once, before the first repeat.

--all-exercises: every exercise of the ladder (grader/exercises.py LADDER) for every student.
Of each ten students, per exercise (rotated so that a student's exercises differ): five hand in
the solution, one a valid alternative (the solution where the exercise has none), two a wrong
kernel of tests/submissions/<id>/ (each file in turn; an endless kernel, `# expect: timeout`, at
most once per exercise in the class), one the untouched starter, and one the hostile file or
nothing. Besides checks per second, the run prints where a timed check's time went (the
phases its speed section carries, waits for the GPU included: docs/ARCHITECTURE.md, "Class
grading") and, per exercise, the spread (max/min) of the speedups the solutions were given.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("ZEROGPU_SECRET", "class-scale-bench")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grader  # noqa: E402,F401 - chooses the back end before numba loads

from grader.classroom.gradebook import Gradebook  # noqa: E402
from grader.classroom.grading import discover  # noqa: E402
from grader.classroom.run import graders  # noqa: E402
from grader.exercises import LADDER  # noqa: E402
from grader.paths import ROOT  # noqa: E402
from grader.settings import CASE_TIMEOUT, CheckOptions  # noqa: E402

GRID_STRIDE_ADD = '''from numba import cuda


@cuda.jit
def add(a, b, c):
    start = cuda.grid(1)
    for i in range(start, c.size, cuda.gridsize(1)):
        c[i] = a[i] + b[i]


def launch(a, b, c):
    add[256, 256](a, b, c)
'''
HOSTILE = "import os\nos._exit(0)\n\n\ndef launch(a, b, c):\n    pass\n"
SUBMISSIONS = ROOT / "tests" / "submissions"
KINDS = [  # (vector_add, matmul_tiled); None: not handed in
    ("solution", "solution"),
    ("grid_stride", "tiles_8x8"),
    ("no_bounds_guard", "unguarded_store"),
    ("off_by_one", "floor_tile_count"),
    ("starter", "starter"),
    ("solution", None),
    ("hostile", "hostile"),
    ("solution", "solution"),
]


def source(exercise_id: str, kind: str) -> str:
    if kind == "solution":
        return (ROOT / "solutions" / f"{exercise_id}.py").read_text()
    if kind == "starter":
        return (ROOT / "exercises" / f"{exercise_id}.py").read_text()
    if kind == "grid_stride":
        return GRID_STRIDE_ADD
    if kind == "tiles_8x8":
        return (ROOT / "solutions" / "matmul_tiled.py").read_text().replace("TILE = 16", "TILE = 8")
    if kind == "hostile":
        return HOSTILE
    return (SUBMISSIONS / exercise_id / f"{kind}.py").read_text()


def make_class(folder: Path, students: int) -> dict:
    """The two-exercise class; returns {(student, exercise): kind}."""
    kinds = {}
    for k in range(students):
        add_kind, mm_kind = KINDS[k % len(KINDS)]
        student = folder / f"s{k:02d}"
        student.mkdir(parents=True)
        (student / "vector_add.py").write_text(source("vector_add", add_kind))
        kinds[(student.name, "vector_add")] = add_kind
        if mm_kind:
            (student / "matmul_tiled.py").write_text(source("matmul_tiled", mm_kind))
            kinds[(student.name, "matmul_tiled")] = mm_kind
    return kinds


ALTERNATIVES = {"vector_add": "grid_stride", "matmul_tiled": "tiles_8x8"}


def expected_verdict(path: Path) -> str:
    first = path.read_text().splitlines()[0]
    return first.removeprefix("# expect:").strip() if first.startswith("# expect:") else ""


def make_full_class(folder: Path, students: int, exercises=LADDER) -> dict:
    """Every one of `exercises` (the whole ladder) for every student (the mix in this file's
    docstring); returns {(student, exercise): kind}."""
    kinds = {}
    wrong = {e: sorted((SUBMISSIONS / e).glob("*.py")) for e in exercises}
    turn = {e: 0 for e in exercises}
    endless_used = set()
    for k in range(students):
        student = folder / f"s{k:03d}"
        student.mkdir(parents=True)
        for j, exercise_id in enumerate(exercises):
            slot = (k + 3 * j) % 10
            if slot < 5:
                kind = "solution"
            elif slot == 5:
                kind = ALTERNATIVES.get(exercise_id, "solution")
            elif slot in (6, 7) and wrong[exercise_id]:
                while True:
                    path = wrong[exercise_id][turn[exercise_id] % len(wrong[exercise_id])]
                    turn[exercise_id] += 1
                    if expected_verdict(path) != "timeout" or exercise_id not in endless_used:
                        break
                if expected_verdict(path) == "timeout":
                    endless_used.add(exercise_id)
                kind = path.stem
            elif slot == 8 or slot in (6, 7):
                kind = "starter"
            else:
                kind = "hostile" if (k // 10) % 2 == 0 else None
            if kind is not None:
                (student / f"{exercise_id}.py").write_text(source(exercise_id, kind))
                kinds[(student.name, exercise_id)] = kind
    return kinds


def progress(total: int, started: float):
    """A line every tenth of the class: a long run shows it is moving, and a cut-off run
    still says how far it got and how fast."""
    done = [0]

    def heard(task, result) -> None:
        done[0] += 1
        if done[0] % max(1, total // 10) == 0 or done[0] == total:
            wall = time.perf_counter() - started
            print(f"  {done[0]}/{total} graded in {wall:.1f} s ({wall / done[0]:.2f} s a check)", flush=True)

    return heard


def phase_breakdown(rows: list) -> dict:
    """Phase -> (checks that had it, total seconds), over every timed check."""
    phases: dict = {}
    for row in rows:
        details = row.result.speed.details if row.result else None
        for name, seconds in (details.phase_seconds if details else {}).items():
            count, total = phases.get(name, (0, 0.0))
            phases[name] = (count + 1, total + seconds)
    return phases


EXPECTED_WAIT = "grader: waiting for the expected output"


def rounds_by_exercise(rows: list) -> dict:
    """Exercise -> (mean seconds of timed rounds, mean rounds, mean seconds the grading process
    then waited for its oracle) over its timed checks: where the GPU's time goes, and which
    oracle keeps a worker waiting."""
    seen: dict = {}
    for row in rows:
        details = row.result.speed.details if row.result else None
        if details and "timed rounds" in details.phase_seconds:
            phases = details.phase_seconds
            seen.setdefault(row.exercise, []).append(
                (phases["timed rounds"], details.rounds, phases.get(EXPECTED_WAIT, 0.0))
            )
    return {e: tuple(sum(column) / len(v) for column in zip(*v)) for e, v in seen.items()}


def solution_spreads(rows: list, kinds: dict) -> dict:
    """Exercise -> (solutions timed, min speedup, max speedup, max/min) over the students who
    handed in the solution: one solution graded many times."""
    speedups: dict = {}
    for row in rows:
        if kinds.get((row.student, row.exercise)) != "solution":
            continue
        details = row.result.speed.details if row.result else None
        if details and details.speedup_vs_baseline:
            speedups.setdefault(row.exercise, []).append(details.speedup_vs_baseline.median)
    return {e: (len(v), min(v), max(v), max(v) / min(v) if min(v) > 0 else float("inf")) for e, v in speedups.items()}


def print_details(rows: list, kinds: dict, wall: float) -> dict:
    """Where the timed checks' time went and how far the solutions' speedups spread."""
    phases = phase_breakdown(rows)
    spreads = solution_spreads(rows, kinds)
    if phases:
        timed = max(count for count, _ in phases.values())
        print(f"  phases of the {timed} timed checks (mean per check, total over all):", flush=True)
        for name, (count, total) in phases.items():
            print(f"    {name:45s} {total / count:7.3f} s  {total:8.1f} s", flush=True)
        alone = phases.get("timed rounds", (0, 0.0))[1]
        print(f"  the GPU held alone (timed rounds): {alone:.1f} s of {wall:.1f} s", flush=True)
    else:
        print("  no timed checks (no GPU): no phases", flush=True)
    crashed = Counter(
        f"{r.exercise}: {(r.result.message if r.result else '')[:300]}" for r in rows if r.verdict == "crashed"
    )
    for said, count in crashed.most_common(5):  # the grader's own failures, to be looked into
        print(f"  crashed x{count}: {said}", flush=True)
    rounds = rounds_by_exercise(rows)
    for exercise_id, (count, low, high, ratio) in spreads.items():
        seconds, mean_rounds, waited = rounds.get(exercise_id, (0.0, 0.0, 0.0))
        print(
            f"  {exercise_id}: {count} solutions timed, speedup {low:.3f}–{high:.3f}x, max/min {ratio:.4f}; "
            f"timed rounds {seconds:.3f} s a check ({mean_rounds:.1f} rounds), then {waited:.3f} s for its oracle",
            flush=True,
        )
    return {
        "timed_rounds_by_exercise": {
            e: {"mean_s": round(t, 4), "mean_rounds": n, "expected_wait_s": round(w, 4)}
            for e, (t, n, w) in rounds.items()
        },
        "phases": {
            name: {"checks": c, "total_s": round(t, 3), "mean_s": round(t / c, 4)} for name, (c, t) in phases.items()
        },
        "solution_speedup_spread": {
            e: {"solutions": c, "min": lo, "max": hi, "max_over_min": r} for e, (c, lo, hi, r) in spreads.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--students", type=int, default=24)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workers", type=int)
    parser.add_argument("--out", default="bench/results/class_scale.json")
    parser.add_argument("--scheduler", help="grade on a Dask cluster: local, or tcp://HOST:8786")
    parser.add_argument(
        "--exercises", default="vector_add,matmul_tiled", help="of vector_add and matmul_tiled (default: both)"
    )
    parser.add_argument("--all-exercises", action="store_true", help="every exercise of the ladder, for every student")
    parser.add_argument("--only", default="", help="with --all-exercises: these exercises of the ladder, the same mix")
    parser.add_argument(
        "--timeout",
        type=float,
        default=CASE_TIMEOUT,
        help=f"seconds per case (zerogpu grade's default: {CASE_TIMEOUT:g})",
    )
    args = parser.parse_args()
    exercises = args.exercises.split(",")
    if args.all_exercises:
        exercises = [e for e in LADDER if not args.only or e in args.only.split(",")]
        if not exercises or args.only and len(exercises) != len(args.only.split(",")):
            parser.error(f"--only: exercises of the ladder, of {', '.join(LADDER)}")
    runs = []
    # the graders `zerogpu grade` uses: this machine's pool, or the Dask cluster, started once
    with tempfile.TemporaryDirectory(prefix="zerogpu-class-") as tmp, graders(args.workers, args.scheduler) as where:
        folder = Path(tmp) / "class"
        kinds = (
            make_full_class(folder, args.students, exercises)
            if args.all_exercises
            else make_class(folder, args.students)
        )
        tasks = discover(folder, exercises)
        handed_in = sum(1 for t in tasks if t.source is not None)
        options = CheckOptions(case_timeout=args.timeout, private=(str(folder),))
        for repeat in range(args.repeats):  # the main loop: one grade of the whole class per repeat
            book = Gradebook(Path(tmp) / f"book-{repeat}.sqlite")
            started = time.perf_counter()
            where.grade(tasks, book, options, on_done=progress(len(tasks), started))
            wall = time.perf_counter() - started
            rows = book.rows()
            verdicts = Counter(r.verdict for r in rows)
            print(
                f"run {repeat + 1}: {len(rows)}/{len(tasks)} rows ({handed_in} handed in) in {wall:.1f} s: "
                f"{len(tasks) / wall:.2f} checks a second, {wall / len(tasks):.2f} s a check "
                f"{dict(sorted(verdicts.items()))}",
                flush=True,
            )
            runs.append(
                {
                    "wall_s": round(wall, 1),
                    "rows": len(rows),
                    "tasks": len(tasks),
                    "handed_in": handed_in,
                    "checks_per_s": round(len(tasks) / wall, 3),
                    "per_check_s": round(wall / len(tasks), 3),
                    "verdicts": dict(verdicts),
                    **print_details(rows, kinds, wall),
                }
            )
            assert len(rows) == len(tasks), "every (student, exercise) row must arrive"
        shutil.rmtree(folder)
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "backend": where.backend,
        "workers": where.workers,
        "scheduler": args.scheduler or "in-process pool",
        "students": args.students,
        "exercises": exercises,
        "case_timeout_s": args.timeout,
        "kinds": dict(Counter(kinds.values())),
        "runs": runs,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

"""Time an nbgrader course's grading and feedback for a class of N students, phase by phase.

    python bench/course_scale.py [--students 100] [--workers N] [--out FILE.json]
                                 [--phases grade,autograde,feedback]

Builds a course (`zerogpu course init`, assignment `warmup` = thread_ids + vector_add),
generates the assignment, and hands in N students' notebooks as `nbgrader collect` leaves them:
most hold the solutions, some the starters (not attempted), some a wrong kernel from
tests/submissions. Then times each phase the instructor runs (docs/COURSE.md):
`zerogpu grade . warmup` (scores into nbgrader's gradebook), `nbgrader autograde warmup`,
`nbgrader generate_feedback warmup`. Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = "warmup"
EXERCISES = ("thread_ids", "vector_add")


def run(args, cwd, env, timeout=7200) -> float:
    started = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(map(str, args))} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return time.perf_counter() - started


def exercise_cell(nb, exercise_id):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == exercise_id)


def hand_in(course: Path, students: int) -> dict:
    """Notebooks for every student; returns what each handed in, by kind."""
    release = course / "release" / ASSIGNMENT
    wrong = {e: sorted((ROOT / "tests" / "submissions" / e).glob("*.py")) for e in EXERCISES}
    kinds = {}
    for k in range(students):
        student = f"s{k:03d}"
        kind = "starter" if k % 10 == 3 else "wrong" if k % 10 in (5, 8) else "solution"
        kinds[kind] = kinds.get(kind, 0) + 1
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        for notebook in release.glob("*.ipynb"):
            nb = nbformat.read(notebook, as_version=4)
            for exercise_id in EXERCISES:
                try:
                    cell = exercise_cell(nb, exercise_id)
                except StopIteration:
                    continue
                if kind == "solution":
                    cell.source = (ROOT / "solutions" / f"{exercise_id}.py").read_text()
                elif kind == "wrong":
                    cell.source = wrong[exercise_id][k % len(wrong[exercise_id])].read_text()
            nbformat.write(nb, folder / notebook.name)
        (folder / "timestamp.txt").write_text("2026-11-30 12:00:00.000000 UTC")
    return kinds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--workers", type=int)
    parser.add_argument("--phases", default="grade,autograde,feedback")
    parser.add_argument("--out", default="bench/results/course_scale.json")
    args = parser.parse_args()
    phases = args.phases.split(",")
    env = {
        **os.environ,
        "ZEROGPU_SECRET": os.environ.get("ZEROGPU_SECRET", "course-scale-bench"),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }
    python = sys.executable
    timings = {}
    with tempfile.TemporaryDirectory(prefix="zerogpu-course-") as tmp:
        course = Path(tmp) / "course"
        timings["course init + generate_assignment"] = run(
            [
                python,
                "-m",
                "grader.cli",
                "course",
                "init",
                str(course),
                "--assignments",
                f"{ASSIGNMENT}=" + ",".join(EXERCISES),
            ],
            ROOT,
            env,
        ) + run([python, "-m", "nbgrader", "generate_assignment", ASSIGNMENT], course, env)
        kinds = hand_in(course, args.students)
        print(f"{args.students} students handed in: {kinds}", flush=True)
        commands = {
            "grade": [python, "-m", "grader.cli", "grade", ".", ASSIGNMENT]
            + (["--workers", str(args.workers)] if args.workers else []),
            "autograde": [python, "-m", "nbgrader", "autograde", ASSIGNMENT],
            "feedback": [python, "-m", "nbgrader", "generate_feedback", ASSIGNMENT],
        }
        for phase in phases:
            timings[" ".join(Path(c).name if i == 0 else c for i, c in enumerate(commands[phase][2:]))] = seconds = run(
                commands[phase], course, env
            )
            print(f"{phase}: {seconds:.1f} s", flush=True)
        feedback = sorted((course / "feedback").rglob("*.html")) if (course / "feedback").exists() else []
    total = sum(timings.values())
    record = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "students": args.students,
        "cpus": os.cpu_count(),
        "handed_in": kinds,
        "seconds": {k: round(v, 1) for k, v in timings.items()},
        "total_s": round(total, 1),
        "feedback_files": len(feedback),
    }
    for name, seconds in timings.items():
        print(f"{name:45} {seconds:8.1f} s")
    print(f"{'total':45} {total:8.1f} s ({len(feedback)} feedback files)")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()

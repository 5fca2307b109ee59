"""Grade a synthetic class and report checks per second: the stall test of class grading.

    python bench/class_scale.py [--students 24] [--repeats 5] [--workers N] [--out FILE.json]
                                [--scheduler local|tcp://HOST:8786] [--exercises vector_add,...]

The class mixes what a real one hands in, for vector_add and matmul_tiled: solutions, valid
alternatives (a grid-stride vector add, a matmul of 8 x 8 tiles), kernels without a bounds guard
(they write past their arrays on a GPU), off-by-one and square-only kernels, untouched starters,
students who handed in one exercise only, and a hostile file that calls os._exit. Each repeat
grades it from scratch (a new gradebook) in graded mode with the default workers (one per GPU,
or one per CPU core without a GPU) and checks that every (student, exercise) row arrived.
With --scheduler the same class is graded on a Dask cluster instead (docs/CLUSTER.md): `local`
starts one on this machine (--workers of them), once, before the first repeat.
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
from contextlib import nullcontext
from pathlib import Path

os.environ.setdefault("ZEROGPU_SECRET", "class-scale-bench")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grader  # noqa: E402,F401 - chooses the back end before numba loads

from grader.backend import current  # noqa: E402
from grader.classroom.gradebook import Gradebook  # noqa: E402
from grader.classroom.grading import default_workers, discover, grade_class  # noqa: E402
from grader.paths import ROOT  # noqa: E402

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


def make_class(folder: Path, students: int) -> None:
    for k in range(students):
        add_kind, mm_kind = KINDS[k % len(KINDS)]
        student = folder / f"s{k:02d}"
        student.mkdir(parents=True)
        (student / "vector_add.py").write_text(source("vector_add", add_kind))
        if mm_kind:
            (student / "matmul_tiled.py").write_text(source("matmul_tiled", mm_kind))


def cluster(args, workers: int, backend: str):
    """A Dask client for --scheduler, else nothing (the in-process pool)."""
    if not args.scheduler:
        return nullcontext()
    from grader.classroom.distributed import dask_client

    return dask_client(args.scheduler, workers, backend)


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
    args = parser.parse_args()
    backend = current()
    workers = args.workers or default_workers(backend)
    if backend == "gpu" and not args.scheduler:  # a cluster's workers measure their own
        from grader.gpu.ceilings import ceilings

        ceilings()
    runs = []
    with tempfile.TemporaryDirectory(prefix="zerogpu-class-") as tmp, cluster(args, workers, backend) as client:
        if client is not None:
            from grader.classroom.distributed import worker_count

            workers = worker_count(client)
        folder = Path(tmp) / "class"
        make_class(folder, args.students)
        tasks = discover(folder, args.exercises.split(","))
        for repeat in range(args.repeats):
            book = Gradebook(Path(tmp) / f"book-{repeat}.sqlite")
            started = time.perf_counter()
            if client is None:
                grade_class(tasks, book, workers=workers, case_timeout=60, backend=backend, private=[folder])
            else:
                from grader.classroom.distributed import grade_class_on

                grade_class_on(client, tasks, book, case_timeout=60, backend=backend, private=[folder])
            wall = time.perf_counter() - started
            rows = book.rows()
            verdicts = Counter(r["verdict"] for r in rows)
            runs.append(
                {
                    "wall_s": round(wall, 1),
                    "rows": len(rows),
                    "tasks": len(tasks),
                    "per_check_s": round(wall / len(tasks), 2),
                    "verdicts": dict(verdicts),
                }
            )
            print(
                f"run {repeat + 1}: {len(rows)}/{len(tasks)} rows in {wall:.1f} s "
                f"({wall / len(tasks):.2f} s a check) {dict(sorted(verdicts.items()))}",
                flush=True,
            )
            assert len(rows) == len(tasks), "every (student, exercise) row must arrive"
        shutil.rmtree(folder)
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "backend": backend,
        "workers": workers,
        "scheduler": args.scheduler or "in-process pool",
        "students": args.students,
        "exercises": args.exercises,
        "runs": runs,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

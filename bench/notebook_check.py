"""A notebook check's wait: `grader.check(id, launch)` as a lesson's check cell calls it, for each
ladder solution, repeated (docs/BENCHMARKS.md, "A check in a notebook").

    python bench/notebook_check.py                      # every rung, 5 checks each
    python bench/notebook_check.py --repeats 9 --ids vector_add,scan

Each solution is run as a notebook cell runs (compiled under a cell-like file name that
linecache knows, in a `__main__`-like namespace), in one process that has imported grader and
numba.cuda first, as a lesson's setup cell does; the checks then follow one another in that
process, as a learner's do, `--pause` seconds apart (reading a result takes a learner longer).
Progress goes to a temporary ZEROGPU_HOME. It prints median, min and
max seconds per exercise (the first check of the process apart: it pays for the imports and the
compile cache) and the load average before and after. Run it on an idle machine.
"""

from __future__ import annotations

import argparse
import linecache
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ["ZEROGPU_HOME"] = tempfile.mkdtemp(prefix="zerogpu-bench-")

import grader  # noqa: E402 - the back end first, as a lesson's setup cell does
from numba import cuda  # noqa: E402,F401 - a lesson's setup cell imports it too

from grader.exercises import LADDER, exercise  # noqa: E402


def cell_launch(exercise_id: str, number: int):
    """The solution's `launch`, defined as a notebook cell defines it."""
    text = exercise(exercise_id).solution_file.read_text(encoding="utf-8")
    filename = f"{tempfile.gettempdir()}/ipykernel_bench/{number}.py"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace = {"__name__": "__main__"}
    exec(compile(text, filename, "exec"), namespace)
    return namespace["launch"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--pause", type=float, default=2.0, help="seconds between checks, uncounted (a learner reads the result)"
    )
    parser.add_argument("--ids", help="comma-separated exercise ids (default: the ladder)")
    args = parser.parse_args()
    ids = args.ids.split(",") if args.ids else list(LADDER)
    print(f"backend {grader.BACKEND}; load average before: {os.getloadavg()}")
    first = time.perf_counter()
    result = grader.check(ids[0], cell_launch(ids[0], 0))
    print(f"first check of the process ({ids[0]}): {time.perf_counter() - first:.2f} s, {result.verdict}")
    print("| exercise | median | min | max | verdicts |")
    print("| --- | --- | --- | --- | --- |")
    medians = []
    for number, exercise_id in enumerate(ids, 1):
        launch = cell_launch(exercise_id, number)
        seconds, verdicts = [], set()
        for _ in range(args.repeats):
            time.sleep(args.pause)
            start = time.perf_counter()
            verdicts.add(grader.check(exercise_id, launch).verdict)
            seconds.append(time.perf_counter() - start)
        medians.append(statistics.median(seconds))
        print(
            f"| {exercise_id} | {medians[-1]:.2f} s | {min(seconds):.2f} s | {max(seconds):.2f} s "
            f"| {', '.join(sorted(verdicts))} |",
            flush=True,
        )
    print(f"| median of the medians | {statistics.median(medians):.2f} s | | | |")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()

"""Does where the buffers land change a kernel's time? The same inputs timed by the grader's
harness after a scratch allocation of a different size each time, which moves every buffer
allocated after it. On an H200 (2026-11-29) the histogram's solution and baseline took
6.12 / 116.2 ms or 11.38 / 139.5 ms from one placement to another (both bound by global
atomics on the hot bin, whose L2 slice depends on its address); vector_add's did not move.

    python bench/placement.py [--only histogram] [--shifts-mib 0,1,2,3,5,8,13]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("ZEROGPU_BACKEND", "gpu")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grader  # noqa: E402,F401
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

from grader.gpu import statistics as timing  # noqa: E402
from grader.exercises import exercise  # noqa: E402
from grader.gpu.harness import measure  # noqa: E402
from grader.steps.load import load_launch  # noqa: E402
from grader.gpu.speed import benchmark_inputs  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="histogram,vector_add")
    parser.add_argument("--shifts-mib", default="0,1,2,3,5,8,13")
    args = parser.parse_args()
    print(f"{'exercise':<14}{'shift MiB':>10}{'solution ms':>13}{'baseline ms':>13}{'speedup':>9}")
    for exercise_id in args.only.split(","):
        ex = exercise(exercise_id)
        solution = load_launch(ex.spec, ex.solution_file.read_text(), str(ex.solution_file))
        inputs = benchmark_inputs(ex, 1)
        for shift in (int(m) for m in args.shifts_mib.split(",")):
            scratch = cuda.device_array(max(shift << 20, 1), np.uint8)  # held until timed
            s = measure(
                ex.spec,
                {"solution": solution, "baseline": ex.baseline},
                inputs,
                flush=ex.spec.benchmark.bound == "memory",
                cap_seconds=2.0,
            )
            sol, base = (float(np.median(s.seconds[k])) * 1e3 for k in ("solution", "baseline"))
            ratio = timing.paired_ratio(s.seconds["baseline"], s.seconds["solution"]).median
            print(f"{exercise_id:<14}{shift:>10}{sol:13.4f}{base:13.4f}{ratio:9.2f}", flush=True)
            del scratch


if __name__ == "__main__":
    main()

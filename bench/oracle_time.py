"""How long an oracle process takes to answer for one timed check, per exercise: what
grader/gpu/speed.py `expected_at_picks` computes (a pointwise exercise's expected output at the
judged elements alone, `Spec.pointwise`), against the whole float64 oracle over the benchmark's
inputs, varied as the checked launch's were, taken at the same elements (`--whole`: what every
exercise cost before).

    python bench/oracle_time.py [--only vector_add,transpose] [--whole]

Runs on the CPU (no GPU needed). The base inputs are drawn first and kept, as an oracle process
keeps them between checks; only the answer itself is timed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("ZEROGPU_BACKEND", "simulator")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from grader.exercises import LADDER, exercise  # noqa: E402
from grader.gpu import speed  # noqa: E402
from grader.steps.judge import picks, taken_at  # noqa: E402

BASE_SEED, SEED, CHECK = 9, 5, (1, 0, 77)


def whole(ex, dims: dict) -> None:
    """The whole oracle, then its values at the picks (what `expected_at_picks` did for all)."""
    _, expected, tolerance = speed.expected_for_check(ex, SEED, CHECK, BASE_SEED)
    for array in ex.spec.outputs:
        taken_at(expected[array.name], tolerance[array.name], picks(int(np.prod(array.shape_for(dims))), CHECK[2]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="")
    parser.add_argument("--whole", action="store_true", help="the whole oracle, for every exercise")
    args = parser.parse_args()
    for exercise_id in args.only.split(",") if args.only else LADDER:
        ex = exercise(exercise_id)
        dims = dict(ex.spec.benchmark.dims)
        speed.benchmark_inputs(ex, BASE_SEED, keep=True)
        clock = time.perf_counter()
        if args.whole:
            whole(ex, dims)
        else:
            speed.expected_at_picks(exercise_id, dims, SEED, CHECK, BASE_SEED)
        way = "whole oracle" if args.whole or not ex.spec.pointwise else "at the picks"
        print(f"{exercise_id:14s} {time.perf_counter() - clock:7.2f} s  ({way})", flush=True)
        speed._kept_inputs.clear()


if __name__ == "__main__":
    main()

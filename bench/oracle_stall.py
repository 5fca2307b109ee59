"""How long the grading process's other threads wait while a timed check's expected output is
computed: in an oracle process (grader/gpu/speed.py `expected_elsewhere`, what the grader does)
against a thread of the grading process (what it did before 2026-12-01 night). numpy's cumsum and
bincount hold the GIL while they run, and the threads that wait behind them judge the cases a
GPU's replayer is waiting for and read the recording children's pipes.

    python bench/oracle_stall.py [--only scan,histogram]

Runs on the CPU (no GPU needed): the oracle is numpy at the benchmark's size.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("ZEROGPU_BACKEND", "simulator")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from grader.exercises import exercise  # noqa: E402
from grader.gpu.speed import expected_at_picks, expected_elsewhere, new_check  # noqa: E402


def lateness(work) -> tuple[float, float]:
    """(seconds `work` took, the longest a thread sleeping 1 ms at a time woke up late, in ms)."""
    late, stop = [], threading.Event()

    def probe():
        while not stop.is_set():
            start = time.perf_counter()
            time.sleep(0.001)
            late.append(time.perf_counter() - start - 0.001)

    thread = threading.Thread(target=probe)
    thread.start()
    start = time.perf_counter()
    work()
    took = time.perf_counter() - start
    stop.set()
    thread.join()
    return took, max(late) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="scan,histogram,softmax_fused,reduce_sum")
    args = parser.parse_args()
    print(f"{'exercise':<15}{'where':<16}{'seconds':>8}{'others late, max':>18}")
    for exercise_id in args.only.split(","):
        ex = exercise(exercise_id)
        check, dims = new_check(), dict(ex.spec.benchmark.dims)
        expected_elsewhere(ex, 5, check, 7).result()  # each keeps the base inputs: not timed
        expected_at_picks(ex.id, dims, 5, check, 7)
        took, late = lateness(lambda: expected_elsewhere(ex, 5, check, 7).result())
        print(f"{exercise_id:<15}{'oracle process':<16}{took:8.2f}{late:15.0f} ms", flush=True)

        def in_a_thread():
            thread = threading.Thread(target=expected_at_picks, args=(ex.id, dims, 5, check, 7))
            thread.start()
            thread.join()

        took, late = lateness(in_a_thread)
        print(f"{exercise_id:<15}{'thread here':<16}{took:8.2f}{late:15.0f} ms", flush=True)


if __name__ == "__main__":
    main()

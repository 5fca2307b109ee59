"""Does the hold before each timed launch matter, and is it long enough? The same kernels
timed by the grader's harness with a hold of at least 1 ms, with the grader's hold (the start
event queued behind a sleeping kernel: at least 0.2 ms, three times the host's time to queue the
launch when that is longer) and without one (the GPU idle while the host dispatches the
launch, as before 2026-11-29), in one process. If 1 ms gives shorter times than the grader's
hold, launch code outlasts the hold and the hold should grow.

    python bench/hold.py [--only saxpy,rgb_to_gray]
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

from grader.gpu import harness as gpu_timing

from grader.exercises import exercise  # noqa: E402
from grader.gpu.speed import benchmark_inputs  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="vector_add,saxpy,rgb_to_gray,transpose,histogram,stencil_1d,softmax_fused")
    args = parser.parse_args()
    held, grader_hold = gpu_timing.hold_gpu, gpu_timing.HOLD_MICROSECONDS
    print(f"{'exercise':<14}{'hold':<8}{'baseline ms':>12}{'target ms':>11}{'base/target':>12}")
    for exercise_id in args.only.split(","):
        ex = exercise(exercise_id)
        inputs = benchmark_inputs(ex, 1)
        for hold in (1000, grader_hold, None):
            gpu_timing.HOLD_MICROSECONDS = hold or grader_hold
            gpu_timing.hold_gpu = held if hold else (lambda microseconds=0: cuda.synchronize())  # none: the GPU idles
            s = gpu_timing.measure(
                ex.spec,
                {"baseline": ex.baseline, "target": ex.target},
                inputs,
                flush=ex.spec.benchmark.bound != "compute",
                cap_seconds=2.0,
            )
            base, target = (float(np.median(s.seconds[k])) * 1e3 for k in ("baseline", "target"))
            ratio = s.ratio("baseline", "target").median
            label = f"{hold} us" if hold else "none"
            print(f"{exercise_id:<14}{label:<8}{base:12.4f}{target:11.4f}{ratio:12.3f}", flush=True)
    gpu_timing.hold_gpu, gpu_timing.HOLD_MICROSECONDS = held, grader_hold


if __name__ == "__main__":
    main()

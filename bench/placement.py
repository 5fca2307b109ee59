"""Does where the buffers land change a kernel's time? The same inputs timed by the grader's
harness (solution, baseline and target interleaved, as in a check) after a scratch allocation
of a different size each time, which moves every buffer allocated after it; one process, the
GPU otherwise idle. On an H200 (2026-11-29) the histogram's solution and baseline took
6.12 / 116.2 ms or 11.38 / 139.5 ms from one placement to another (both bound by global
atomics on the hot bin, whose L2 slice depends on its address); vector_add's did not move.
The exercises whose speedups spread when several checks shared a GPU (docs/BENCHMARKS-LOG.md,
"Several checks per GPU by turns") are the default. `--held-by-another-mib N`: another process
allocates N MiB on the GPU and holds it, idle, while this one measures, as another check's
memory does when checks share a GPU.

    python bench/placement.py [--only histogram,...] [--shifts-mib 0,1,2,3,5] [--cap-seconds 1]
                              [--held-by-another-mib N] [--dims rows=16384,cols=4096]

`--dims`: the exercise's inputs at other sizes than its benchmark's (one exercise), to see
whether a kernel's time depends on placement at one size and not at another.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("ZEROGPU_BACKEND", "gpu")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grader  # noqa: E402,F401
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

from grader.exercises import exercise  # noqa: E402
from grader.gpu.harness import measure  # noqa: E402
from grader.steps.load import load_launch  # noqa: E402
from grader.gpu.speed import BENCH_CASE_INDEX, INPUT_SETS, benchmark_inputs  # noqa: E402
from grader.steps.cases import case_rng  # noqa: E402


HOLDER = """
import sys
import numpy as np
from numba import cuda
held = cuda.device_array(max(int(sys.argv[1]) << 20, 1), np.uint8)
cuda.synchronize()
print("held", flush=True)
sys.stdin.read()  # until the measuring process closes our stdin
"""


def hold_memory(mib: int) -> subprocess.Popen:
    """Another process that allocates `mib` MiB on the GPU before this one allocates anything."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(mib)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    if holder.stdout.readline().strip() != "held":
        sys.exit("the process meant to hold GPU memory failed")
    return holder


def resized(spec, dims_text: str):
    """`spec` with its benchmark at other sizes (`measure` sizes its buffers by the spec)."""
    dims = dict(spec.benchmark.dims)
    dims.update((name, int(value)) for name, value in (item.split("=") for item in dims_text.split(",")))
    print(f"{spec.id} at {dims}")
    return dataclasses.replace(spec, benchmark=dataclasses.replace(spec.benchmark, dims=dims))


def inputs_at(spec) -> list[dict]:
    """The benchmark's input sets drawn as `benchmark_inputs` draws them, at the spec's sizes."""
    dims = spec.benchmark.dims
    return [spec.make_inputs(dims, case_rng(1, BENCH_CASE_INDEX + k)) for k in range(INPUT_SETS)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="histogram,reduce_sum,warp_reduce,scan,transpose,vector_add")
    parser.add_argument("--shifts-mib", default="0,1,2,3,5")
    parser.add_argument("--cap-seconds", type=float, default=1.0)
    parser.add_argument("--held-by-another-mib", type=int, default=0)
    parser.add_argument("--dims", default="", help="name=value,...: these sizes instead of the benchmark's")
    args = parser.parse_args()
    holder = hold_memory(args.held_by_another_mib) if args.held_by_another_mib else None
    if holder:
        print(f"another process holds {args.held_by_another_mib} MiB of GPU memory")
    print(f"{'exercise':<14}{'shift MiB':>10}{'solution ms':>13}{'baseline ms':>13}{'target ms':>11}{'speedup':>9}")
    for exercise_id in args.only.split(","):
        ex = exercise(exercise_id)
        solution = load_launch(ex.spec, ex.solution_file.read_text(), str(ex.solution_file))
        spec = resized(ex.spec, args.dims) if args.dims else ex.spec
        inputs = inputs_at(spec) if args.dims else benchmark_inputs(ex, 1)
        for shift in (int(m) for m in args.shifts_mib.split(",")):
            scratch = cuda.device_array(max(shift << 20, 1), np.uint8)  # held until timed
            s = measure(
                spec,
                {"solution": solution, "baseline": ex.baseline, "target": ex.target},
                inputs,
                flush=spec.benchmark.bound != "compute",
                cap_seconds=args.cap_seconds,
            )
            sol, base, target = (float(np.median(s.seconds[k])) * 1e3 for k in ("solution", "baseline", "target"))
            ratio = s.ratio("baseline", "solution").median
            print(f"{exercise_id:<14}{shift:>10}{sol:13.4f}{base:13.4f}{target:11.4f}{ratio:9.2f}", flush=True)
            del scratch
    if holder:
        holder.stdin.close()
        holder.wait()


if __name__ == "__main__":
    main()

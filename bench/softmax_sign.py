"""Softmax's solution, target and baseline on the benchmark input as drawn and negated, and the
solution again with its division by the row's sum written as a multiplication by its inverse.
Each launch's time: CUDA events around it, L2 flushed before it, the GPU otherwise idle (host
dispatch included: compare the two columns of a row, not these times with the harness's).

    python bench/softmax_sign.py

On an H200 (2026-12-02) the solution took 0.560 ms as drawn and 0.446 ms negated: the rows
holding a +90 (a third of them) give exp values that underflow to denormals, and a division
with a denormal quotient takes the GPU's slow path; with the multiplication, 0.328 and 0.327.
Rounds of a timed check therefore never negate softmax's input (Array.negatable).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("ZEROGPU_BACKEND", "gpu")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grader  # noqa: E402,F401 - chooses the back end before numba loads
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

from grader.exercises import exercise  # noqa: E402
from grader.gpu.device_kernels import read_all_launch  # noqa: E402
from grader.gpu.harness import flush_bytes  # noqa: E402
from grader.gpu.speed import benchmark_inputs  # noqa: E402
from grader.steps.load import load_launch  # noqa: E402

DIVISION = "out[row, c] = math.exp(x[row, c] - m) / total"
MULTIPLICATION = "out[row, c] = math.exp(x[row, c] - m) * (float32(1.0) / total)"


def main(rounds: int = 20):
    ex = exercise("softmax_fused")
    source = ex.solution_file.read_text()
    assert DIVISION in source
    contenders = {
        "solution (/ total)": load_launch(ex.spec, source, str(ex.solution_file)),
        "solution (* 1/total)": load_launch(ex.spec, source.replace(DIVISION, MULTIPLICATION), "multiplied.py"),
        "target": ex.target,
        "baseline": ex.baseline,
    }
    x = benchmark_inputs(ex, 1)[0]["x"]
    inputs = {"as drawn": cuda.to_device(x), "negated": cuda.to_device(-x)}
    out = cuda.device_array_like(x)
    flush_words, sink = cuda.device_array(flush_bytes() // 4, np.uint32), cuda.device_array(1, np.uint32)

    def timed(launch, x_device):
        read_all_launch(flush_words, sink)
        start, end = cuda.event(), cuda.event()
        start.record()
        launch(x_device, out)
        end.record()
        end.synchronize()
        return start.elapsed_time(end)

    for launch in contenders.values():  # compile and load first
        for x_device in inputs.values():
            timed(launch, x_device)
    times = {(who, how): [] for who in contenders for how in inputs}
    for _ in range(rounds):
        for who, launch in contenders.items():
            for how, x_device in inputs.items():
                times[(who, how)].append(timed(launch, x_device))
    for who in contenders:
        print(f"{who:<22}" + "  ".join(f"{how}: {np.median(times[(who, how)]):.4f} ms" for how in inputs), flush=True)


if __name__ == "__main__":
    main()

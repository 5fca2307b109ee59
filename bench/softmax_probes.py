"""What moves softmax_fused's solution's time? Each launch timed alone: CUDA events around it,
L2 flushed before it, the GPU otherwise idle (host dispatch included: compare the figures of
one table, not these times with the harness's).

    python bench/softmax_probes.py sign      # the input as drawn and negated
    python bench/softmax_probes.py buffers   # 8 input/output pairs held at once, timed in turn

`sign`, on an H200 (2026-12-02): the solution 0.560 ms on the input as drawn, 0.446 negated;
with its division by the row's sum written as a multiplication by the inverse, 0.328 and 0.327.
The rows holding a +90 give exp values that underflow to denormals, and a division with a
denormal quotient takes the GPU's slow path: rounds never negate softmax's input since
(Array.negatable). `buffers`, three fresh processes: 1.003-1.006 between buffers, the same
medians in each process: not the buffers' placement.
"""

from __future__ import annotations

import argparse
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
from grader.gpu.arena import flush_bytes  # noqa: E402
from grader.gpu.speed import benchmark_inputs  # noqa: E402
from grader.steps.load import load_launch  # noqa: E402

DIVISION = "out[row, c] = math.exp(x[row, c] - m) / total"
MULTIPLICATION = "out[row, c] = math.exp(x[row, c] - m) * (float32(1.0) / total)"


class Timer:
    def __init__(self):
        self.flush_words = cuda.device_array(flush_bytes() // 4, np.uint32)
        self.sink = cuda.device_array(1, np.uint32)

    def ms(self, launch, x_device, out_device) -> float:
        read_all_launch(self.flush_words, self.sink)
        start, end = cuda.event(), cuda.event()
        start.record()
        launch(x_device, out_device)
        end.record()
        end.synchronize()
        return start.elapsed_time(end)


def sign(ex, x, rounds: int):
    source = ex.solution_file.read_text()
    assert DIVISION in source
    contenders = {
        "solution (/ total)": load_launch(ex.spec, source, str(ex.solution_file)),
        "solution (* 1/total)": load_launch(ex.spec, source.replace(DIVISION, MULTIPLICATION), "multiplied.py"),
        "target": ex.target,
        "baseline": ex.baseline,
    }
    inputs = {"as drawn": cuda.to_device(x), "negated": cuda.to_device(-x)}
    out, timer = cuda.device_array_like(x), Timer()
    for launch in contenders.values():  # compile and load first
        for x_device in inputs.values():
            timer.ms(launch, x_device, out)
    times = {(who, how): [] for who in contenders for how in inputs}
    for _ in range(rounds):
        for who, launch in contenders.items():
            for how, x_device in inputs.items():
                times[(who, how)].append(timer.ms(launch, x_device, out))
    for who in contenders:
        print(f"{who:<22}" + "  ".join(f"{how}: {np.median(times[(who, how)]):.4f} ms" for how in inputs))


def buffers(ex, x, rounds: int, count: int = 8):
    contenders = {"solution": load_launch(ex.spec, ex.solution_file.read_text(), str(ex.solution_file))}
    contenders["target"] = ex.target
    rng = np.random.default_rng()
    pairs, spacers = [], []  # a spacer of 1-63 MiB after each pair moves the next one
    for _ in range(count):
        pairs.append((cuda.to_device(x), cuda.device_array_like(x)))
        spacers.append(cuda.device_array(int(rng.integers(1, 64)) << 20, np.uint8))
    timer = Timer()
    for launch in contenders.values():
        for x_device, out in pairs:
            timer.ms(launch, x_device, out)
    times = {who: [[] for _ in pairs] for who in contenders}
    for _ in range(rounds):
        for k, (x_device, out) in enumerate(pairs):
            for who, launch in contenders.items():
                times[who][k].append(timer.ms(launch, x_device, out))
    for who, per in times.items():
        medians = [float(np.median(t)) for t in per]
        print(
            f"{who:<9} medians by buffer, ms: {' '.join(f'{m:.4f}' for m in medians)}  max/min {max(medians) / min(medians):.4f}"
        )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("probe", choices=["sign", "buffers"])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    ex = exercise("softmax_fused")
    x = benchmark_inputs(ex, 1)[0]["x"]
    (sign if args.probe == "sign" else buffers)(ex, x, args.rounds)


if __name__ == "__main__":
    main()

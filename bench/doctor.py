"""Kernel doctor vs Numba's CUDA simulator, on the CPU (docs/BENCHMARKS.md, "Kernel doctor vs
simulator").

    python bench/doctor.py ladder [--seed 11] [--ids vector_add,...]   # every case of each solution
    python bench/doctor.py sizes                                        # growing sizes, both executors
    python bench/doctor.py roles [--repeats 3] [--ids ...]              # the doctor alone, every role

`roles` times the doctor alone on every case of each exercise's solution, baseline and target
(a case it leaves to the simulator ends that role's run and is left out), the fastest of
`repeats` runs each. `ladder` times what a check does per case (fresh device copies, one `launch`, copies back;
judging is the same for both and not timed) for all correctness cases of each solution, on the
simulator and on the doctor with every diagnosis switched on, and checks both pass. `sizes` times one launch at growing sizes until
one executor passes TIME_CAP seconds. Run it on an idle machine; it prints the load average.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import grader  # noqa: E402,F401 - the back end first
import numpy as np  # noqa: E402

from grader.doctor.efficiency import forget  # noqa: E402
from grader.doctor.errors import Unsupported  # noqa: E402
from grader.steps.cases import prepare  # noqa: E402
from grader.doctor.execute import execute as doctor  # noqa: E402
from grader.exercises import LADDER, exercise  # noqa: E402
from grader.steps.judge import judge_case  # noqa: E402
from grader.steps.load import load_launch  # noqa: E402
from grader.steps.execute import execute as simulate  # noqa: E402

TIME_CAP = 60.0


def _solution(ex):
    path = ex.solution_file
    return load_launch(ex.spec, path.read_text(), str(path)), str(path)


def _run_all(ex, launch, files, prepared, runner) -> tuple[float, list]:
    """Seconds spent running the cases (device copies, launch, copies back: what each back end
    does differently; judging, identical for both, is not timed) and the verdicts."""
    verdicts, seconds = [], 0.0
    for p in prepared:
        start = time.perf_counter()
        outcome = runner(ex.spec, launch, p.inputs, dict(p.case.dims), files)
        seconds += time.perf_counter() - start
        verdicts.append(judge_case(ex.spec, p.case, outcome, p.expected, p.tolerance).verdict)
    return seconds, verdicts


def ladder(ids, seed, repeats) -> None:
    """Each solution: simulator and doctor alternately, `repeats` times; the fastest of each
    (the machine is shared: the minimum is the least disturbed run). The doctor's profiler
    budget is reset before every doctor run, so each one profiles as a fresh process would."""
    print(f"load average before: {os.getloadavg()}")
    print("| exercise | cases | simulator | kernel doctor (all diagnoses) | speed-up | both pass |")
    print("| --- | --- | --- | --- | --- | --- |")
    total_sim = total_doc = 0.0
    for eid in ids:
        ex = exercise(eid)
        launch, path = _solution(ex)
        prepared = prepare(ex, seed)
        sims, docs = [], []
        for _ in range(repeats):
            sim, sim_v = _run_all(ex, launch, (path,), prepared, simulate)
            forget()
            doc, doc_v = _run_all(ex, launch, (path,), prepared, doctor)
            sims.append(sim)
            docs.append(doc)
        sim, doc = min(sims), min(docs)
        total_sim, total_doc = total_sim + sim, total_doc + doc
        ok = all(v == "passed" for v in sim_v + doc_v)
        print(
            f"| {eid} | {len(prepared)} | {sim:.2f} s | {doc:.3f} s | {sim / doc:.0f}× | {'yes' if ok else sim_v + doc_v} |",
            flush=True,
        )
    print(f"| all 11 | | {total_sim:.1f} s | {total_doc:.2f} s | {total_sim / total_doc:.0f}× | |")
    print(f"load average after: {os.getloadavg()}")


def roles(ids, seed, repeats) -> None:
    """The doctor alone: the fastest of `repeats` runs of every case, per role of each exercise."""
    print(f"load average before: {os.getloadavg()}")
    print("| exercise | solution | baseline | target |")
    print("| --- | --- | --- | --- |")
    total = 0.0
    for eid in ids:
        ex = exercise(eid)
        launch, path = _solution(ex)
        prepared = prepare(ex, seed)
        cells = []
        for launch, files in ((launch, (path,)), (ex.baseline, ()), (ex.target, ())):
            best = min(_doctor_only(ex, launch, files, prepared) for _ in range(repeats))
            total += best
            cells.append(f"{best:.3f} s")
        print(f"| {eid} | {' | '.join(cells)} |", flush=True)
    print(f"all: {total:.2f} s; load average after: {os.getloadavg()}")


def _doctor_only(ex, launch, files, prepared) -> float:
    forget()
    seconds = 0.0
    for p in prepared:
        start = time.perf_counter()
        try:
            doctor(ex.spec, launch, p.inputs, dict(p.case.dims), files)
        except Unsupported:  # left to the simulator: not the doctor's time
            break
        seconds += time.perf_counter() - start
    return seconds


SIZES = {
    "vector_add": [{"n": n} for n in (1_000, 10_000, 100_000, 1_000_000)],
    "reduce_sum": [{"n": n} for n in (1_000, 10_000, 100_000, 1_000_000)],
    "matmul_tiled": [{"m": s, "k": s, "n": s} for s in (32, 64, 128, 256)],
    "transpose": [{"m": s, "n": s} for s in (64, 256, 1024)],
    "softmax_fused": [{"rows": r, "cols": 1000} for r in (4, 32, 256)],
}


def sizes(ids) -> None:
    print(f"load average before: {os.getloadavg()}")
    print("| exercise | size | simulator | kernel doctor | speed-up |")
    print("| --- | --- | --- | --- | --- |")
    for eid in ids:
        ex = exercise(eid)
        launch, path = _solution(ex)
        sim_over = False
        for dims in SIZES.get(eid, []):
            inputs = ex.spec.make_inputs(dims, np.random.default_rng(0))
            forget()
            start = time.perf_counter()
            out = doctor(ex.spec, launch, inputs, dims, (path,))
            doc = time.perf_counter() - start
            assert out.error is None, out.error
            if sim_over:
                sim_text, ratio = f"> {TIME_CAP:.0f} s (not run)", "—"
            else:
                start = time.perf_counter()
                simulate(ex.spec, launch, inputs, dims, (path,))
                sim = time.perf_counter() - start
                sim_over = sim > TIME_CAP / 4
                sim_text, ratio = f"{sim:.2f} s", f"{sim / doc:.0f}×"
            shown = ", ".join(f"{k}={v}" for k, v in dims.items())
            print(f"| {eid} | {shown} | {sim_text} | {doc:.2f} s | {ratio} |", flush=True)
            if doc > TIME_CAP:
                break
    print(f"load average after: {os.getloadavg()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("ladder", "sizes", "roles"))
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ids", help="comma-separated exercise ids (default: all)")
    args = parser.parse_args()
    ids = args.ids.split(",") if args.ids else (list(SIZES) if args.what == "sizes" else LADDER)
    if args.what == "roles":
        roles(ids, args.seed, args.repeats)
    else:
        ladder(ids, args.seed, args.repeats) if args.what == "ladder" else sizes(ids)


if __name__ == "__main__":
    main()

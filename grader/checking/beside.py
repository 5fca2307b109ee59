"""The kernel doctor beside a GPU: what a GPU cannot see, a check on a GPU host still fails on.

A GPU runs a racy kernel however the warps happened to meet: a missing barrier, a barrier in
an `if`, a block storing while others read can all give the right answer on one run and the
wrong one on the next, and a write past an output that lands outside the grader's fence goes
unseen. The kernel doctor (grader/doctor/) sees each of them on every run. So on a GPU host a
check also replays its plans on the doctor, in a CPU child of its own, on its smallest cases,
while the GPU replays and times: a race or an out-of-bounds access the doctor finds fails the
check there too, with the message a laptop gives (docs/DOCTOR.md).
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

from grader.children.run import run_in_child
from grader.doctor.integration import result_report
from grader.steps.judge import judge_case

DOCTOR_ONLY = ("race", "out_of_bounds")
"""The doctor's verdicts that fail a check a GPU passed: what a GPU gets right by luck."""
SEVERAL_BLOCKS = 1000
"""Elements past which a case spans several blocks of any block size a ladder kernel uses."""

_POOL = ThreadPoolExecutor(max_workers=8, thread_name_prefix="zerogpu-beside")


def smallest(prepared: list) -> list:
    """The cases the doctor runs beside a GPU: the two smallest (the edges: one element, a
    partial block) and the smallest of several blocks (else the largest), where races between
    blocks show."""
    distinct = {tuple(p.case.dims.items()): p for p in reversed(prepared)}  # the first of equal sizes
    by_size = sorted(distinct.values(), key=_size)
    several = next((p for p in by_size[2:] if _size(p) > SEVERAL_BLOCKS), by_size[-1])
    return by_size[:2] + ([several] if several not in by_size[:2] else [])


def _size(p) -> int:
    total = 1
    for value in p.case.dims.values():
        total *= max(int(value), 1)
    return total


def start(task) -> Future:
    """The doctor's run of `task` (grader/children/task.py, its engine the simulator's: the
    kernel doctor) in a CPU child, started now; its future holds the ChildRun (or the exception
    it met)."""
    return _POOL.submit(run_in_child, task)


def doctors_failure(ex, cases: list, future: Future | None):
    """The first of `cases` the doctor failed with a DOCTOR_ONLY verdict, judged as on a laptop
    (a CaseResult), or None: none such, no run, or a run that stopped (its timeout or crash is
    the GPU's to judge, never counted twice)."""
    if future is None:
        return None
    try:
        run = future.result()
    except Exception:  # noqa: BLE001 - the GPU's verdict stands; the doctor only adds
        return None
    for p in cases:
        outcome = run.outcomes.get(p.index)
        if outcome is None:
            continue
        result = judge_case(ex.spec, p.case, outcome, p.expected, p.tolerance, p.inputs)
        if result.verdict in DOCTOR_ONLY:
            return result
    return None


def doctors_report(future: Future | None):
    """The doctor's report of its run beside the GPU (grader/result/doctor.py), or None."""
    if future is None:
        return None
    try:
        return result_report(future.result().outcomes.values())
    except Exception:  # noqa: BLE001
        return None

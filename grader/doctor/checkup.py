"""The doctor's checkup (`zerogpu doctor`): every case of an exercise run on the kernel doctor
in this process, judged, with the doctor's findings merged into one report.

It runs in-process (a learner's diagnostic, not a grade): the static policy still applies,
and each case has a time limit (SIGALRM, on the main thread). It lives in doctor/ because it
needs only what is below it (the steps of a check, the exercises) and the doctor itself."""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from pathlib import Path

from grader.doctor.efficiency import forget
from grader.doctor.execute import execute_or_simulate
from grader.doctor.summary import merge
from grader.exercises import exercise
from grader.settings import CASE_TIMEOUT
from grader.steps.cases import new_seed, prepare
from grader.steps.judge import judge_case
from grader.steps.load import SubmissionError, load_launch


__all__ = ["CaseTimeout", "SubmissionError", "run_checkup", "time_limit"]
"""SubmissionError: what `run_checkup` raises for a file it cannot load."""


class CaseTimeout(Exception):
    pass


@contextmanager
def time_limit(seconds: float):
    """Raise CaseTimeout in the learner's code after `seconds` (main thread only); yields an
    Event set when it fired, since an engine may catch the exception as the kernel's own."""
    expired = threading.Event()
    if threading.current_thread() is not threading.main_thread() or not seconds:
        yield expired
        return

    def expire(signum, frame):
        expired.set()
        raise CaseTimeout(late(seconds))

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield expired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def late(seconds: float) -> str:
    return f"no result within {seconds:g} s (an endless loop?)"


def run_checkup(exercise_id: str, path: Path, seed: int | None = None, timeout: float = CASE_TIMEOUT):
    """(case rows, merged DoctorReport, the seed) for every case of the exercise, up to the
    first that runs out of time; raises SubmissionError when the file cannot be loaded."""
    ex = exercise(exercise_id)
    seed = new_seed() if seed is None else seed
    launch = load_launch(ex.spec, path.read_bytes(), str(path))
    forget()  # profile the kernels afresh for this report
    rows, reports = [], []
    for p in prepare(ex, seed):
        try:
            with time_limit(timeout) as expired:
                outcome = execute_or_simulate(ex.spec, launch, p.inputs, dict(p.case.dims), (str(path),))
        except CaseTimeout:
            pass
        if expired.is_set():
            rows.append(_row(p.case, "timeout", late(timeout), timeout))
            break
        result = judge_case(ex.spec, p.case, outcome, p.expected, p.tolerance)
        rows.append(
            _row(
                p.case,
                result.verdict,
                result.message,
                round(outcome.seconds, 4),
                line=result.line,
                source=result.source,
            )
        )
        reports.append(outcome.report)
    return rows, merge(reports), seed


def _row(case, verdict: str, message: str, seconds: float, **where) -> dict:
    """One case's line of the doctor's table (and of its JSON)."""
    return {
        "name": case.name,
        "dims": dict(case.dims),
        "verdict": verdict,
        "message": message,
        "seconds": seconds,
        **where,
    }

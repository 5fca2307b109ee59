"""What a check's outcomes say: each case judged, a race found by rerunning, the verdict, the
score, the hint and the mistake it names, the warnings of a passed check, the speed section
folded in. Every function here decides from data the grading process holds (grader/checking/
check.py runs the children; these read what came back)."""

from __future__ import annotations

import re
import time
from dataclasses import replace
from pathlib import Path

from grader import backend as _backend
from grader.children.stuck import timeout_message
from grader.doctor.findings import mistake_of
from grader.exercises import Exercise
from grader.result import DEFAULT_HINTS, CaseResult, CheckResult, Speed, names_no_cause, telling_case
from grader.settings import SPEED_TIMEOUT, STARTUP_SECONDS, ANSWER_SECONDS
from grader.steps.cases import PreparedCase
from grader.steps.execute import Outcome
from grader.steps.judge import judge_case
from grader.steps.load import SubmissionError


NOT_ON_SIMULATOR = Speed(
    measured=False,
    reason="not measured: no GPU. Without a GPU your kernel runs on the CPU (the kernel "
    "doctor, or Numba's CUDA simulator), whose times say nothing about GPU speed.",
)


def speed_section(backend: str) -> Speed:
    if backend == _backend.SIMULATOR:
        return NOT_ON_SIMULATOR
    return Speed(measured=False, reason="not measured: the kernel did not pass every correctness case.")


def judge_speed(ex: Exercise, seed: int, samples, expected=None) -> tuple[Speed, str | None]:
    """Speed section from timing samples (or the reason there are none)."""
    from grader.gpu.ceilings import ceilings
    from grader.gpu.speed import evaluate

    if isinstance(samples, str):
        return Speed(measured=False, reason=f"not measured: timing failed ({samples})."), None
    try:
        ceiling = ceilings()
    except RuntimeError as err:  # the grader's own trouble: no speed, never a traceback
        return Speed(measured=False, reason=f"not measured: {err}."), None
    return evaluate(ex, seed, samples, ceiling, expected=expected)


def with_speed(result: CheckResult, ex: Exercise, speed: Speed, wrong: str | None) -> CheckResult:
    """Fold the speed section into a passed result: points, too_slow, wrong timed output."""
    if wrong:
        return replace(
            result, verdict="wrong_result", message=wrong, hint=hint_for(ex, "wrong_result"), score=0.0, speed=speed
        )
    if not speed.measured:
        return replace(result, speed=speed)
    d = speed.details
    max_score = result.max_score + d.max_points
    if not d.meets_requirement and d.trusted:
        return replace(
            result,
            verdict="too_slow",
            message=d.summary,
            hint=hint_for(ex, "too_slow"),
            speed=speed,
            max_score=max_score,
        )
    return replace(result, speed=speed, score=result.score + d.points, max_score=max_score)


def hint_for(ex: Exercise, verdict: str, failing: CaseResult | None = None, doctor=None) -> str:
    """What to change, from the first diagnosis that knows: the exercise's own fix for the
    mistake the failing case names (saxpy keeps its grid: an unwritten tail there wants a loop,
    not more blocks), the failing case's own hint (a doctor finding that became its verdict, a
    pattern the judge recognised), then the doctor's first finding, then the exercise's hint
    for the verdict, then the default one. A finding's fix always matches the mistake named,
    where a verdict's hint only guesses."""
    if verdict == "passed":
        return ""
    if failing is not None and failing.mistake in ex.spec.hints:
        return ex.spec.hints[failing.mistake]
    if failing is not None and failing.hint:
        return failing.hint
    finding = next((f for f in (doctor.findings if doctor else ()) if f.fix), None)
    if finding is not None:
        return finding.fix
    return ex.spec.hints.get(verdict) or DEFAULT_HINTS.get(verdict, "")


def _differs(a: Outcome, b: Outcome) -> bool:
    if a.error or b.error or a.buffers.keys() != b.buffers.keys():
        return False
    return any(a.buffers[k].tobytes() != b.buffers[k].tobytes() for k in a.buffers)


def _as_race(result: CaseResult) -> CaseResult:
    return replace(
        result,
        verdict="race",
        mistake="",  # the first run's diagnosis named one outcome of the race, not its cause
        message=(
            "Runs on the same input gave different answers: threads are racing, or reading shared "
            f"memory that no thread wrote. First run: {result.message}"
        ),
    )


def summarise(
    ex: Exercise, backend: str, seed, case_results: list[CaseResult], started: float, graded: bool = False, doctor=None
) -> CheckResult:
    failing = next((c for c in case_results if not c.passed), None)
    passed_count = sum(c.passed for c in case_results)
    score = round(ex.spec.points * passed_count / max(len(case_results), 1), 2)
    if failing is None:
        verdict, message = "passed", f"All {len(case_results)} cases passed."
    else:
        verdict = failing.verdict
        if verdict == "wrong_result":  # the smallest such case: its inputs are the easiest to read
            failing = min((c for c in case_results if c.verdict == verdict), key=lambda c: c.total)
        said = failing.line and re.search(rf"\bline {failing.line}\b", failing.message)  # named already
        where = f" (line {failing.line}: {failing.source})" if failing.line and not said else ""
        message = f"Case '{failing.name}' {fmt_dims(failing.dims)}: {failing.message}{where}"
    # a failing case that names no cause (nothing written, or no values at all) takes its hint
    # and mistake from the first one that names one (a guard `< n - 1`, blocks rounded down)
    teller = failing if failing is None or not names_no_cause(failing) else (telling_case(case_results) or failing)
    return CheckResult(
        exercise=ex.id,
        title=ex.spec.title,
        backend=backend,
        verdict=verdict,
        message=message,
        hint=hint_for(ex, verdict, teller, doctor),
        cases=tuple(case_results),
        speed=speed_section(backend),
        score=score,
        max_score=float(ex.spec.points),
        seed=None if graded else seed,  # graded: a secret was mixed in
        seconds=round(time.perf_counter() - started, 3),
        doctor=doctor,
        warnings=passed_warnings(doctor) if failing is None else (),
        mistake=_mistake(teller, doctor) if failing is not None else _passed_mistake(doctor),
    )


def _mistake(failing: CaseResult, doctor) -> str:
    """The failing case's mistake, else the doctor's first finding's (as `_hint` picks)."""
    if failing.mistake:
        return failing.mistake
    finding = next((f for f in (doctor.findings if doctor else ()) if f.fix), None)
    return mistake_of(finding) if finding is not None else ""


COALESCED_BELOW = 0.5
"""Global accesses less coalesced than this are named in a passed check's headline."""


CONFLICTS_FROM = 4.0
"""Shared-memory bank conflicts of this degree or worse (on average) likewise."""


def _passed_mistake(doctor) -> str:
    """The mistake a passed check's first warning names (as `passed_warnings` orders them): a
    doctor warning with a headline, else what makes the kernel slow; "" when none."""
    finding = next((f for f in (doctor.findings if doctor else ()) if f.headline), None)
    if finding is not None:
        return mistake_of(finding)
    slow = _slow(doctor)
    return slow[0][0] if slow else ""


def passed_warnings(doctor) -> tuple:
    """What a passed check's headline names ("PASSED — but ..."): the doctor's warnings that
    have a headline (several threads storing one element), then what makes the kernel slow."""
    found = tuple(dict.fromkeys(f.headline for f in (doctor.findings if doctor else ()) if f.headline))
    return found + speed_warnings(doctor)


def speed_warnings(doctor) -> tuple:
    """What the doctor measured that makes a correct kernel slow on a GPU, worst first."""
    return tuple(text for _, text in _slow(doctor))


def _slow(doctor) -> list:
    """(mistake, warning) for what makes a correct kernel slow on a GPU, worst first."""
    found = []
    # a kernel the doctor already named an uncoalesced access of (its `slow_memory` warning,
    # with the array and the fix) is not named twice
    named = {f.kernel for f in (doctor.findings if doctor else ()) if f.kind == "slow_memory"}
    for k in doctor.kernels if doctor else ():
        worst = min((v for v in (k.load_efficiency, k.store_efficiency) if v is not None), default=None)
        if worst is not None and worst < COALESCED_BELOW and k.kernel not in named:
            found.append((worst, "uncoalesced", f"{worst:.0%} coalesced: slow on a GPU (kernel `{k.kernel}`)"))
        degree = k.shared_degree
        if degree is not None and degree >= CONFLICTS_FROM:
            found.append(
                (1 / degree, "bank_conflicts", f"{degree:.0f}-way bank conflicts: slow on a GPU (kernel `{k.kernel}`)")
            )
    return [(mistake, text) for _, mistake, text in sorted(found)]


def fmt_dims(dims: dict) -> str:
    return "(" + ", ".join(f"{k}={v}" for k, v in dims.items()) + ")" if dims else ""


def failed_before_running(ex: Exercise, backend: str, seed, err: SubmissionError, started: float) -> CheckResult:
    where = (
        f" (line {err.line}: {err.source})" if err.line and err.source else (f" (line {err.line})" if err.line else "")
    )
    return CheckResult(
        exercise=ex.id,
        title=ex.spec.title,
        backend=backend,
        verdict=err.verdict,
        message=err.message + where,
        hint=hint_for(ex, err.verdict),
        cases=(),
        speed=speed_section(backend),
        score=0.0,
        max_score=float(ex.spec.points),
        seed=seed,
        seconds=round(time.perf_counter() - started, 3),
    )


RACE_RERUNS = 3


def time_limit(ex: Exercise, case_timeout: float) -> float:
    """The most one check of `ex` may take, every per-case allowance spent in full: a first
    run (start, load, every case, GPU timing) and the race re-runs. A grading coordinator
    ends a task that outlives it, whatever the task is waiting on."""
    cases = len(ex.spec.cases) + 1  # with the repeat of the last case
    first = STARTUP_SECONDS + case_timeout * (cases + 1) + ANSWER_SECONDS + SPEED_TIMEOUT
    reruns = STARTUP_SECONDS + case_timeout * (RACE_RERUNS + 1) + ANSWER_SECONDS
    return first + reruns + 30.0  # the grader's own judging and copying


def stopped_by_grader(ex: Exercise, backend: str, verdict: str, message: str) -> CheckResult:
    """The result of a check the grader had to end from outside (`timeout`, `crashed`)."""
    return failed_before_running(ex, backend, None, SubmissionError(verdict, message), time.perf_counter())


def all_passed(ex: Exercise, prepared: list[PreparedCase], outcomes: dict) -> bool:
    """Did every case pass on its first run? Else the check fails whatever reruns find, and
    its speed is not measured."""
    return all(
        p.index in outcomes and judge_case(ex.spec, p.case, outcomes[p.index], p.expected, p.tolerance).passed
        for p in prepared
    )


def judge_all(ex: Exercise, prepared: list[PreparedCase], outcomes: dict, rerun) -> list[CaseResult]:
    """Judge every case; run the first wrong one RACE_RERUNS more times, back to back in one
    process: different answers to the same input mean a race (or a read of memory nothing
    wrote), not a plain bug."""
    results, rerun_done = [], False
    for p in prepared:
        result = judge_case(ex.spec, p.case, outcomes[p.index], p.expected, p.tolerance, p.inputs)
        if result.verdict == "wrong_result" and not rerun_done:
            rerun_done = True
            again = [o for o in rerun(p) if o is not None]
            if any(_differs(again[0], other) for other in again[1:]):
                result = _as_race(result)
        results.append(result)
    return results


def stopped_recording(ex: Exercise, backend: str, seed, stop, path: Path, started: float) -> CheckResult:
    """A recording child that ran out of time (said with where the file or `launch` was, as its
    lookout last told) or died."""
    if stop.verdict != "timeout":
        return failed_before_running(
            ex,
            backend,
            seed,
            SubmissionError(stop.verdict, f"The run stopped before any case: {stop.detail}."),
            started,
        )
    try:
        source = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        source = ""
    message, line, text, hint = timeout_message(stop.places, source, stop.limit, stop.phase)
    result = failed_before_running(ex, backend, seed, SubmissionError("timeout", message, line, text), started)
    return replace(result, hint=hint or result.hint)


def failed_at_benchmark_size(result: CheckResult, ex: Exercise, failure) -> CheckResult:
    """Every case passed, but `launch` could not be recorded at the benchmark's size: on a GPU
    it fails there, so it is not timed and not passed (a launch that refuses large sizes must
    not escape the speed grade)."""
    sizes = fmt_dims(dict(ex.spec.benchmark.dims))
    said = failure.message if failure is not None else "`launch` was not recorded at that size"
    verdict = failure.verdict if failure is not None else "exception"
    return replace(
        result,
        verdict=verdict,
        message=f"At the benchmark's size {sizes}: {said}",
        hint=failure.hint if failure is not None and failure.hint else hint_for(ex, verdict),
        score=0.0,
    )


def stopped_case(p: PreparedCase, run, path: Path) -> CaseResult:
    """The case a stopped child was on: a crash, or the time limit, said with where the
    code was when it ran out (grader/children/stuck.py) when the child told us."""
    if run.stopped == "crashed":
        return CaseResult(p.case.name, dict(p.case.dims), "crashed", f"The run died: {run.detail}.")
    try:
        source = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        source = ""
    message, line, text, hint = timeout_message(run.where, source, run.limit, run.phase)
    return CaseResult(p.case.name, dict(p.case.dims), "timeout", message, line=line, source=text, hint=hint)

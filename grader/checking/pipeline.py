"""The grading pipeline: load -> run cases -> judge -> (GPU) time -> score -> result.

`check` runs a launch function in this process (the notebook path); `check_file` runs a
source file in a child process with a time limit (the CLI path). Both share every step.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from grader import backend as _backend
from grader.steps.cases import PreparedCase, derived_seed, load_secret, new_seed, prepare, secret_file
from grader.doctor.findings import mistake_of
from grader.doctor.integration import as_report, case_executor, result_report
from grader.exercises import Exercise, exercise
from grader.result import DEFAULT_HINTS
from grader.steps.judge import judge_case
from grader.steps.load import SubmissionError, check_signature
from grader.result import CaseResult, CheckResult, Speed
from grader.steps.execute import Outcome

DEFAULT_CASE_TIMEOUT = 60.0


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
            result, verdict="wrong_result", message=wrong, hint=_hint(ex, "wrong_result"), score=0.0, speed=speed
        )
    if not speed.measured:
        return replace(result, speed=speed)
    d = speed.details
    max_score = result.max_score + d["max_points"]
    if not d["meets_requirement"] and not d["below_floor"] and not d["hidden_work"]:
        return replace(
            result,
            verdict="too_slow",
            message=d["summary"],
            hint=_hint(ex, "too_slow"),
            speed=speed,
            max_score=max_score,
        )
    return replace(result, speed=speed, score=result.score + d["points"], max_score=max_score)


def _hint(ex: Exercise, verdict: str, failing: CaseResult | None = None, doctor=None) -> str:
    """What to change, from the first diagnosis that knows: the failing case's own (a doctor
    finding that became its verdict, a pattern the judge recognised), then the doctor's first
    finding, then the exercise's hint for the verdict, then the default one. A finding's fix
    always matches the mistake named, where a verdict's hint only guesses."""
    if verdict == "passed":
        return ""
    if failing is not None and failing.hint:
        return failing.hint
    finding = next((f for f in getattr(as_report(doctor), "findings", ()) if f.fix), None)
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
    ex: Exercise, backend: str, seed, case_results: list[CaseResult], started: float, secret: bool = False, doctor=None
) -> CheckResult:
    failing = next((c for c in case_results if not c.passed), None)
    slow = _slow(doctor) if failing is None else []
    passed_count = sum(c.passed for c in case_results)
    score = round(ex.spec.points * passed_count / max(len(case_results), 1), 2)
    if failing is None:
        verdict, message = "passed", f"All {len(case_results)} cases passed."
    else:
        verdict = failing.verdict
        if verdict == "wrong_result":  # the smallest such case: its inputs are the easiest to read
            failing = min((c for c in case_results if c.verdict == verdict), key=lambda c: c.total)
        where = f" (line {failing.line}: {failing.source})" if failing.line else ""
        message = f"Case '{failing.name}' {_fmt_dims(failing.dims)}: {failing.message}{where}"
    return CheckResult(
        exercise=ex.id,
        title=ex.spec.title,
        backend=backend,
        verdict=verdict,
        message=message,
        hint=_hint(ex, verdict, failing, doctor),
        cases=tuple(case_results),
        speed=speed_section(backend),
        score=score,
        max_score=float(ex.spec.points),
        seed=None if secret else seed,
        seconds=round(time.perf_counter() - started, 3),
        doctor=doctor,
        warnings=tuple(text for _, text in slow) if failing is None else (),
        mistake=_mistake(failing, doctor) if failing is not None else (slow[0][0] if slow else ""),
    )


def _mistake(failing: CaseResult, doctor) -> str:
    """The failing case's mistake, else the doctor's first finding's (as `_hint` picks)."""
    if failing.mistake:
        return failing.mistake
    finding = next((f for f in getattr(as_report(doctor), "findings", ()) if f.fix), None)
    return mistake_of(finding) if finding is not None else ""


COALESCED_BELOW = 0.5
"""Global accesses less coalesced than this are named in a passed check's headline."""
CONFLICTS_FROM = 4.0
"""Shared-memory bank conflicts of this degree or worse (on average) likewise."""


def speed_warnings(doctor) -> tuple:
    """What the doctor measured that makes a correct kernel slow on a GPU, worst first."""
    return tuple(text for _, text in _slow(doctor))


def _slow(doctor) -> list:
    """(mistake, warning) for what makes a correct kernel slow on a GPU, worst first."""
    report = as_report(doctor)
    found = []
    for k in getattr(report, "kernels", ()):
        worst = min((v for v in (k.load_efficiency, k.store_efficiency) if v is not None), default=None)
        if worst is not None and worst < COALESCED_BELOW:
            found.append((worst, "uncoalesced", f"{worst:.0%} coalesced: slow on a GPU (kernel `{k.kernel}`)"))
        degree = k.shared_degree
        if degree is not None and degree >= CONFLICTS_FROM:
            found.append(
                (1 / degree, "bank_conflicts", f"{degree:.0f}-way bank conflicts: slow on a GPU (kernel `{k.kernel}`)")
            )
    return [(mistake, text) for _, mistake, text in sorted(found)]


def _fmt_dims(dims: dict) -> str:
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
        hint=_hint(ex, err.verdict),
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
    from grader.checking.isolate import SPEED_TIMEOUT, STARTUP_SECONDS

    cases = len(ex.spec.cases) + 1  # with the repeat of the last case
    first = STARTUP_SECONDS + case_timeout * (cases + 1) + SPEED_TIMEOUT
    reruns = STARTUP_SECONDS + case_timeout * (RACE_RERUNS + 1)
    return first + reruns + 30.0  # the grader's own judging and copying


def stopped_by_grader(ex: Exercise, backend: str, verdict: str, message: str) -> CheckResult:
    """The result of a check the grader had to end from outside (`timeout`, `crashed`)."""
    return failed_before_running(ex, backend, None, SubmissionError(verdict, message), time.perf_counter())


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


def check(
    exercise_id: str,
    launch,
    *,
    seed: int | None = None,
    isolate: bool = True,
    case_timeout: float = DEFAULT_CASE_TIMEOUT,
) -> CheckResult:
    """Check a `launch` function (what a notebook's check cell calls). With `isolate`, the
    code `launch` uses is copied into a file and checked in a child process like the CLI (an
    endless kernel cannot hang the notebook); when it cannot be copied (a lambda, a global
    array), it is checked in this process. Never raises for a learner's bug; stores nothing
    (grader.check, the notebook's facade, records the learner's progress)."""
    result = _check_isolated(exercise_id, launch, seed, case_timeout) if isolate else None
    if result is None:
        result = _check_in_process(exercise_id, launch, seed)
    return result


def _check_isolated(exercise_id: str, launch, seed, case_timeout) -> CheckResult | None:
    import tempfile

    from grader.steps.extract import NotExtractable, module_source

    exercise(exercise_id)  # an unknown id raises here, as in-process
    try:
        source = module_source(launch)
    except NotExtractable:
        return None
    with tempfile.TemporaryDirectory(prefix="zerogpu-notebook-") as tmp:
        path = Path(tmp) / f"{exercise_id}_notebook.py"
        path.write_text(source)
        return check_file(exercise_id, path, seed=seed, case_timeout=case_timeout)


def _check_in_process(exercise_id: str, launch, seed) -> CheckResult:
    started = time.perf_counter()
    ex = exercise(exercise_id)
    seed = new_seed() if seed is None else seed
    backend = _backend.current()
    try:
        check_signature(ex.spec, launch)
    except SubmissionError as err:
        return failed_before_running(ex, backend, seed, err, started)
    prepared = prepare(ex, seed)

    execute = case_executor()

    def run(p: PreparedCase) -> Outcome:
        return execute(ex.spec, launch, p.inputs, dict(p.case.dims))

    outcomes = {p.index: run(p) for p in prepared}
    results = judge_all(ex, prepared, outcomes, lambda p: [run(p) for _ in range(RACE_RERUNS)])
    result = summarise(ex, backend, seed, results, started, doctor=result_report(outcomes.values()))
    if result.passed and backend == _backend.GPU and ex.spec.benchmark:
        from grader.gpu.speed import collect

        result = with_speed(result, ex, *judge_speed(ex, seed, collect(ex, launch, seed)))
    return result


def check_file(
    exercise_id: str,
    path,
    *,
    seed: int | None = None,
    case_timeout: float = DEFAULT_CASE_TIMEOUT,
    graded: bool = False,
    device: int | None = None,
    private=(),
    secret: int | None = None,
    unsandboxed: bool = False,
) -> CheckResult:
    """Check a submission file in a child process (what the CLI calls). Graded mode mixes
    the grading host's secret into every input (`secret`: a task's own, derived by a class
    coordinator on another machine); the child only ever sees derived values, and runs in
    bubblewrap (SandboxUnavailable when it cannot, unless `unsandboxed`, which every result
    then says)."""
    from grader.checking.isolate import run_in_child
    from grader.containment import sandbox

    sandboxed = graded and not (unsandboxed or sandbox.forced_off())
    if sandboxed:
        sandbox.require()

    started = time.perf_counter()
    ex = exercise(exercise_id)
    seed = new_seed() if seed is None else seed
    secret = (load_secret() if secret is None else secret) if graded else None
    private = [str(p) for p in private] + ([str(secret_file())] if graded else [])
    backend = _backend.current()
    path = Path(path)
    clock = time.perf_counter()
    prepared = prepare(ex, seed, secret)
    preparing = time.perf_counter() - clock
    time_seed = derived_seed(seed, secret)
    timed = backend == _backend.GPU and ex.spec.benchmark is not None
    expected = _expected_in_background(ex, time_seed, secret) if timed else None
    try:
        run = run_in_child(
            ex.id,
            path,
            prepared,
            case_timeout,
            time_seed=time_seed if timed else None,
            private=private,
            device=device,
            time_check=expected[0] if timed else (0, 0),
            sandboxed=sandboxed,
        )
    except SubmissionError as err:
        return replace(
            failed_before_running(ex, backend, None if graded else seed, err, started),
            unsandboxed=graded and not sandboxed,
        )

    def rerun(p: PreparedCase):
        twins = [replace(p, index=p.index + 1000 * k) for k in range(RACE_RERUNS)]
        again = run_in_child(ex.id, path, twins, case_timeout, private=private, device=device, sandboxed=sandboxed)
        return [again.outcomes.get(t.index) for t in twins]

    finished = [p for p in prepared if p.index in run.outcomes]
    results = judge_all(ex, finished, run.outcomes, rerun)
    if run.stopped:
        stuck = prepared[len(finished)]
        message = {
            "timeout": f"Your code made no progress: {run.detail} (an endless loop?); it was stopped.",
            "crashed": f"The run died: {run.detail}.",
        }[run.stopped]
        results.append(CaseResult(stuck.case.name, dict(stuck.case.dims), run.stopped, message))
        for p in prepared[len(finished) + 1 :]:
            results.append(
                CaseResult(p.case.name, dict(p.case.dims), run.stopped, "not run: an earlier case stopped the run")
            )
    result = summarise(ex, backend, seed, results, started, secret=graded, doctor=result_report(run.outcomes.values()))
    result = replace(result, unsandboxed=graded and not sandboxed)
    if result.passed and run.samples is not None:
        check_at, future = expected
        clock = time.perf_counter()
        try:
            want = future.result()
        except Exception as exc:  # noqa: BLE001 - e.g. out of host memory: no speed, no crash
            return with_speed(
                result,
                ex,
                Speed(
                    measured=False,
                    reason=(f"not measured: the grader could not compute the expected output ({type(exc).__name__})."),
                ),
                None,
            )
        if not isinstance(run.samples, str):  # where a check's wall time goes, for bench/trust.py
            run.samples.phases = {
                "grader: preparing the cases": preparing,
                "child: start and imports": run.startup_seconds or 0.0,
                **run.samples.phases,
                "grader: waiting for the expected output": time.perf_counter() - clock,
            }
        result = with_speed(result, ex, *judge_speed(ex, time_seed, run.samples, (check_at, want)))
    return result


def _expected_in_background(ex: Exercise, seed: int, secret):
    """((round, set), future of expected_for_check): the grading process picks the timed launch
    to check and computes its expected output while the child runs (seconds at 2^28 elements).
    A daemon thread: when the submission fails before timing, nobody waits for it at exit."""
    import threading
    from concurrent.futures import Future

    from grader.gpu.speed import expected_for_check, new_check

    check_at, future = new_check(), Future()

    def compute():
        try:
            future.set_result(expected_for_check(ex, seed, check_at, None))
        except BaseException as exc:  # noqa: BLE001 - handed to whoever asks for the result
            future.set_exception(exc)

    threading.Thread(target=compute, name="zerogpu-expected", daemon=True).start()
    return check_at, future

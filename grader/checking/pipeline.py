"""The grading pipeline: load -> run cases -> judge -> (GPU) time -> score -> result.

`check` runs a launch function in this process (the notebook path); `check_file` runs a
source file in a child process with a time limit (the CLI path). Both share every step.
"""

from __future__ import annotations

import re
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from grader import backend as _backend
from grader.steps.cases import RERUN_STRIDE, PreparedCase, derived_seed, load_secret, new_seed, prepare, secret_file
from grader.doctor.findings import mistake_of
from grader.doctor.integration import case_executor, result_report
from grader.exercises import Exercise, exercise
from grader.result import DEFAULT_HINTS, GENERIC_MISTAKES, telling_case
from grader.steps.judge import judge_case
from grader.steps.load import SubmissionError, check_signature, checked_text
from grader.result import CaseResult, CheckResult, Speed
from grader.steps.execute import Outcome
from grader.settings import CASE_TIMEOUT, CheckOptions
from grader.steps.extract import NotExtractable, extract
from grader.doctor.report import DOCTOR, DoctorReport

BENCH_SEED = 0
"""Graded checks draw the benchmark's base inputs from this and the secret (`check_file`)."""

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
    max_score = result.max_score + d.max_points
    if not d.meets_requirement and d.trusted:
        return replace(
            result,
            verdict="too_slow",
            message=d.summary,
            hint=_hint(ex, "too_slow"),
            speed=speed,
            max_score=max_score,
        )
    return replace(result, speed=speed, score=result.score + d.points, max_score=max_score)


def _hint(ex: Exercise, verdict: str, failing: CaseResult | None = None, doctor=None) -> str:
    """What to change, from the first diagnosis that knows: the failing case's own (a doctor
    finding that became its verdict, a pattern the judge recognised), then the doctor's first
    finding, then the exercise's hint for the verdict, then the default one. A finding's fix
    always matches the mistake named, where a verdict's hint only guesses."""
    if verdict == "passed":
        return ""
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
        message = f"Case '{failing.name}' {_fmt_dims(failing.dims)}: {failing.message}{where}"
    # a first failing case that only says what its output shows ("nothing written") takes its
    # hint and mistake from the first one that names a cause (a guard `< n - 1`)
    named = failing is None or (failing.mistake and failing.mistake not in GENERIC_MISTAKES)
    teller = failing if named else (telling_case(case_results) or failing)
    return CheckResult(
        exercise=ex.id,
        title=ex.spec.title,
        backend=backend,
        verdict=verdict,
        message=message,
        hint=_hint(ex, verdict, teller, doctor),
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
    from grader.checking.stuck import ANSWER_SECONDS  # asking a late child where it is

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


def check(
    exercise_id: str,
    launch,
    *,
    seed: int | None = None,
    isolate: bool = True,
    case_timeout: float = CASE_TIMEOUT,
    progress=None,
) -> CheckResult:
    """Check a `launch` function (what a notebook's check cell calls). With `isolate`, the
    code `launch` uses is copied into a file and checked in a child process like the CLI (an
    endless kernel cannot hang the notebook); when it cannot be copied (a lambda, a global
    array), it is checked in this process. Never raises for a learner's bug; stores nothing
    (grader.check, the notebook's facade, records the learner's progress). `progress(line)`
    hears the case under way, as in `check_file`."""
    result = _check_isolated(exercise_id, launch, seed, case_timeout, progress) if isolate else None
    if result is None and isolate:
        result = _check_recorded_here(exercise_id, launch, seed, case_timeout, progress)
    if result is None:
        result = _check_in_process(exercise_id, launch, seed)
    return result


def _check_recorded_here(exercise_id: str, launch, seed, case_timeout, progress=None) -> CheckResult:
    """A notebook's `launch` that cannot be copied into a file (a lambda, a global array):
    recorded in this process, on placeholders as the recording child records a file, then
    replayed in a checking child like any check (a time limit, no host access to the inputs)."""
    ex = exercise(exercise_id)
    try:
        check_signature(ex.spec, launch)
    except SubmissionError as err:
        return failed_before_running(ex, _backend.current(), seed, err, time.perf_counter())
    where = getattr(getattr(launch, "__code__", None), "co_filename", "<notebook>")
    return check_file(
        exercise_id,
        where,
        seed=seed,
        case_timeout=case_timeout,
        progress=progress,
        recorded=lambda wanted: record_here(ex, launch, wanted),
    )


def record_here(ex: Exercise, launch, wanted: dict):
    """The checked message of `launch` recorded in this process (grader/replay/record.py), held
    to the same schema as a recording child's."""
    from grader.replay.plan import Message
    from grader.replay.record import Recorder, record_cases, recording
    from grader.replay.schema import PlanError, read_message

    recorder = Recorder(own_arrays=True)
    recorder.filename = getattr(getattr(launch, "__code__", None), "co_filename", None)
    with recording(recorder):
        plans = record_cases(recorder, launch, ex.spec, wanted)
    outputs = [a.name for a in ex.spec.outputs]
    try:
        text = Message(None, plans, recorder.kernels).to_json()
        return read_message(text, outputs=outputs, host_data=ex.spec.answer_from_inputs)
    except PlanError as why:
        raise SubmissionError("exception", f"The grader could not record what your `launch` did: {why}.") from None


def _check_isolated(exercise_id: str, launch, seed, case_timeout, progress=None) -> CheckResult | None:
    exercise(exercise_id)  # an unknown id raises here, as in-process
    try:
        extracted = extract(launch)
    except NotExtractable:
        return None
    with tempfile.TemporaryDirectory(prefix="zerogpu-notebook-") as tmp:
        path = Path(tmp) / f"{exercise_id}_notebook.py"
        path.write_text(extracted.source)
        result = check_file(exercise_id, path, seed=seed, case_timeout=case_timeout, progress=progress)
    return in_cells(result, extracted) if extracted.lines else result


_LEARNER_CODE = ("source", "text")
"""Fields holding the learner's own code: never rewritten."""


def in_cells(result: CheckResult, extracted) -> CheckResult:
    """A result whose lines are the extracted module's, with every line said as the learner's
    line in their cell (grader/steps/extract.py), wherever it appears: the verdict, the cases,
    the doctor's findings and sites."""

    def walk(value, key=""):
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(walk(v, key) for v in value)
        if key in ("line", "other_line") and isinstance(value, int):
            return extracted.line(value)
        if isinstance(value, str) and key not in _LEARNER_CODE:
            return extracted.text(value)
        return value

    return CheckResult.from_dict(walk(result.to_dict()))


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
    options: CheckOptions = CheckOptions(),
    progress=None,
    recorded=None,
    **fields,
) -> CheckResult:
    """Check a submission file in a child process (what the CLI calls). `recorded`: the
    message of a `launch` recorded in this process (`record_here`), replayed instead of
    recording the file (which then only names it in messages). Graded mode mixes
    the grading host's secret into every input (`secret`: a task's own, derived by a class
    coordinator on another machine); the child only ever sees derived values, and runs in
    bubblewrap (SandboxUnavailable when it cannot, unless `unsandboxed`, which every result
    then says). `progress(text)`, if given, hears what is under way, about twice a second.
    `options` (grader/settings.py), any of whose `fields` may also be given by name."""
    from grader.checking.recording import RecordingStopped
    from grader.containment import sandbox

    options = replace(options, **fields)
    sandboxed = options.graded and not (options.unsandboxed or sandbox.forced_off())
    if sandboxed:
        sandbox.require()
    check = _file_check(exercise_id, Path(path), options, sandboxed, progress, recorded is not None)
    try:
        check = replace(check, hand_in=_hand_in(check.ex, check.path, recorded is not None))
        message, run, beside = _record_and_replay(check, recorded)
    except RecordingStopped as stop:
        result = _stopped_recording(check.ex, check.backend, check.shown_seed, stop, check.path, check.started)
        return replace(result, unsandboxed=check.unsandboxed)
    except SubmissionError as err:
        result = failed_before_running(check.ex, check.backend, check.shown_seed, err, check.started)
        return replace(result, unsandboxed=check.unsandboxed)
    result = _with_the_doctors_verdict(check, _judged(check, message, run), beside)
    failed_at_size = message.plans.get("bench")
    recorded_at_size = check.ex.spec.benchmark is None or hasattr(failed_at_size, "steps")
    if result.passed and not recorded_at_size:  # a Failure, or no plan at all: on every engine
        return _failed_at_benchmark_size(result, check.ex, failed_at_size)
    if result.passed and run.samples is not None:
        result = _with_timing(check, run, result)
    return result


@dataclass(frozen=True)
class _FileCheck:
    """One file's check, as `check_file`'s steps share it."""

    ex: Exercise
    path: Path
    backend: str
    seed: int
    graded: bool
    sandboxed: bool
    private: list
    """Folders the children's guard hides (the secret's file too, when graded)."""
    case_timeout: float
    device: int | None
    prepared: list
    preparing: float
    """Seconds spent preparing the cases: a phase of the speed section."""
    time_seed: int
    bench_seed: int
    timed: bool
    expected: tuple | None
    """((round, set), future of expected_for_check) when timed."""
    runs: object
    """What replays the cases: a child of its own or the GPU's replayer (replayers.runner)."""
    progress: object
    kernel_files: bool
    started: float
    hand_in: object = None
    """The hand-in as this process read it (`_hand_in`, grader/replay/sources.py `HandIn`): the
    one text every engine runs."""

    @property
    def shown_seed(self):
        """The seed a result may show: none in graded mode."""
        return None if self.graded else self.seed

    @property
    def unsandboxed(self) -> bool:
        return self.graded and not self.sandboxed


def _file_check(
    exercise_id: str, path: Path, options: CheckOptions, sandboxed: bool, progress, kernel_files: bool
) -> _FileCheck:
    """Seeds, the secret, the private folders and the prepared cases of one file's check; the
    timed launch's expected output starts computing in the background."""
    from grader.checking.replayers import runner

    started = time.perf_counter()
    ex = exercise(exercise_id)
    graded = options.graded
    seed = new_seed() if options.seed is None else options.seed
    secret = (load_secret() if options.secret is None else options.secret) if graded else None
    private = [str(p) for p in options.private] + ([str(secret_file())] if graded else [])
    backend = _backend.current()
    clock = time.perf_counter()
    prepared = prepare(ex, seed, secret)
    preparing = time.perf_counter() - clock
    time_seed = derived_seed(seed, secret)
    # graded checks share the benchmark's base inputs (each varies them its own way, round by
    # round): a replayer makes them and their buffers once per run (grader/checking/replayers.py)
    bench_seed = derived_seed(BENCH_SEED, options.bench_secret or secret) if graded else time_seed
    timed = backend == _backend.GPU and ex.spec.benchmark is not None
    expected = _expected_in_background(ex, time_seed, bench_seed if graded else None) if timed else None
    return _FileCheck(
        ex=ex,
        path=path,
        backend=backend,
        seed=seed,
        graded=graded,
        sandboxed=sandboxed,
        private=private,
        case_timeout=options.case_timeout,
        device=options.device,
        prepared=prepared,
        preparing=preparing,
        time_seed=time_seed,
        bench_seed=bench_seed,
        timed=timed,
        expected=expected,
        runs=runner(options.device, sandboxed, private),
        progress=progress,
        kernel_files=kernel_files,
        started=started,
    )


def _hand_in(ex: Exercise, path: Path, recorded_here: bool):
    """The hand-in's bytes, read once by this process, and its text checked before anything runs
    (grader/steps/load.py `checked_text`: Python can read it, the policy allows it). A `launch`
    recorded in the learner's own process (`recorded_here`) keeps its kernels' own files."""
    from grader.replay.sources import HandIn

    if recorded_here:
        return HandIn("", str(path))
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SubmissionError("exception", f"The grader could not read your file ({exc.strerror or exc}).") from None
    text = checked_text(data, path.name, ex.spec.allowed_imports, ex.spec.allowed_library_calls)
    return HandIn(text, path.name, data)


def _record_and_replay(check: _FileCheck, recorded) -> tuple:
    """(message, ChildRun, the doctor's run beside a GPU or None) of the first run: `launch`
    recorded (by a recording child, or `recorded`), then replayed on every case, and timed when
    every case passed; on a GPU host the kernel doctor replays the smallest cases meanwhile
    (grader/checking/beside.py)."""
    from grader.checking.isolate import discard_ahead, run_in_child, start_ahead
    from grader.checking.recording import record_in_child

    ex, prepared, case_timeout = check.ex, check.prepared, check.case_timeout
    # the checking child imports while the recording child records
    ahead = start_ahead(ex.id, check.private, check.device, check.sandboxed) if check.runs is run_in_child else None
    try:
        wanted = plans_wanted(ex, prepared)
        message = (
            recorded(wanted)
            if recorded is not None
            else record_in_child(
                ex.id, check.hand_in, wanted, case_timeout, private=check.private, sandboxed=check.sandboxed
            )
        )
    except BaseException:
        discard_ahead(ahead)
        raise
    beside = _doctor_beside(check, message)
    run = check.runs(
        ex.id,
        check.hand_in,
        message,
        prepared,
        case_timeout,
        time_seed=check.time_seed if check.timed else None,
        bench_seed=check.bench_seed,
        private=check.private,
        device=check.device,
        time_check=check.expected[0] if check.timed else (0, 0),
        sandboxed=check.sandboxed,
        progress=_case_progress(prepared, case_timeout, check.progress) if check.progress else None,
        worth_timing=(lambda outcomes: all_passed(ex, prepared, outcomes)) if check.timed else None,
        ahead=ahead,
        kernel_files=check.kernel_files,
    )
    return message, run, beside


def _doctor_beside(check: _FileCheck, message):
    """On a GPU host, the kernel doctor's run of the smallest cases, started now (a CPU child,
    sandboxed as the check is), or None elsewhere."""
    from grader.checking import beside
    from grader.checking.isolate import run_in_child

    if check.backend != _backend.GPU:
        return None
    cases = beside.smallest(check.prepared)
    options = dict(private=check.private, sandboxed=check.sandboxed, kernel_files=check.kernel_files)
    return cases, beside.start(run_in_child, check.ex.id, check.hand_in, message, cases, check.case_timeout, **options)


def _with_the_doctors_verdict(check: _FileCheck, result: CheckResult, beside) -> CheckResult:
    """A GPU's result, failed where the doctor beside it found a race or an out-of-bounds access
    (grader/checking/beside.py), with the doctor's message; as it was otherwise."""
    from grader.checking.beside import doctors_failure, doctors_report

    if beside is None:
        return result
    cases, future = beside
    found = doctors_failure(check.ex, cases, future)
    if found is None or not result.passed and result.verdict in ("race", "out_of_bounds"):
        return result
    cases = [found if (c.name, c.dims) == (found.name, found.dims) else c for c in result.cases]
    judged = summarise(check.ex, check.backend, check.seed, cases, check.started, check.graded, doctors_report(future))
    return replace(judged, unsandboxed=check.unsandboxed)


def _rerun(check: _FileCheck, message, p: PreparedCase) -> list:
    """Case `p` run RACE_RERUNS more times, back to back in one child: each run's outcome, or
    None where the child gave none."""
    twins = [replace(p, index=p.index + RERUN_STRIDE * k) for k in range(RACE_RERUNS)]
    again = check.runs(
        check.ex.id,
        check.hand_in,
        message,
        twins,
        check.case_timeout,
        kernel_files=check.kernel_files,
        private=check.private,
        device=check.device,
        sandboxed=check.sandboxed,
        progress=_case_progress(twins, check.case_timeout, check.progress, again=True) if check.progress else None,
    )
    return [again.outcomes.get(t.index) for t in twins]


def _judged(check: _FileCheck, message, run) -> CheckResult:
    """Every case the child finished, judged (`judge_all`), then the one it stopped on and those
    it never reached; the doctor's report; the verdict."""
    from grader.checking.stuck import engine_of

    prepared = check.prepared
    finished = [p for p in prepared if p.index in run.outcomes]
    results = judge_all(check.ex, finished, run.outcomes, lambda p: _rerun(check, message, p))
    if run.stopped:
        results.append(_stopped_case(prepared[len(finished)], run, check.path))
        for p in prepared[len(finished) + 1 :]:
            results.append(
                CaseResult(p.case.name, dict(p.case.dims), run.stopped, "not run: an earlier case stopped the run")
            )
    report = result_report(run.outcomes.values())
    if report is None and engine_of(run.where or []) == "doctor":  # killed before any outcome
        report = DoctorReport(DOCTOR)
    result = summarise(check.ex, check.backend, check.seed, results, check.started, graded=check.graded, doctor=report)
    return replace(result, unsandboxed=check.unsandboxed)


EXPECTED_TIMEOUT = 300.0
"""Seconds a timed check waits for its expected output (an oracle process that died sends none)."""


def _with_timing(check: _FileCheck, run, result: CheckResult) -> CheckResult:
    """A passed result with its speed section: the child's samples judged against the expected
    output this process computed meanwhile."""
    check_at, future = check.expected
    clock = time.perf_counter()
    try:
        want = future.result(timeout=EXPECTED_TIMEOUT)
    except Exception as exc:  # noqa: BLE001 - e.g. out of host memory: no speed, no crash
        reason = f"not measured: the grader could not compute the expected output ({type(exc).__name__})."
        return with_speed(result, check.ex, Speed(measured=False, reason=reason), None)
    if not isinstance(run.samples, str):  # where a check's wall time goes, for bench/trust.py
        run.samples.phases = {
            "grader: preparing the cases": check.preparing,
            "child: start and imports": run.startup_seconds or 0.0,
            **run.samples.phases,
            "grader: waiting for the expected output": time.perf_counter() - clock,
        }
    return with_speed(result, check.ex, *judge_speed(check.ex, check.time_seed, run.samples, (check_at, want)))


def _stopped_recording(ex: Exercise, backend: str, seed, stop, path: Path, started: float) -> CheckResult:
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
    from grader.checking.stuck import timeout_message

    try:
        source = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        source = ""
    message, line, text, hint = timeout_message(stop.places, source, stop.limit, stop.phase)
    result = failed_before_running(ex, backend, seed, SubmissionError("timeout", message, line, text), started)
    return replace(result, hint=hint or result.hint)


def _failed_at_benchmark_size(result: CheckResult, ex: Exercise, failure) -> CheckResult:
    """Every case passed, but `launch` could not be recorded at the benchmark's size: on a GPU
    it fails there, so it is not timed and not passed (a launch that refuses large sizes must
    not escape the speed grade)."""
    sizes = _fmt_dims(dict(ex.spec.benchmark.dims))
    said = failure.message if failure is not None else "`launch` was not recorded at that size"
    verdict = failure.verdict if failure is not None else "exception"
    return replace(
        result,
        verdict=verdict,
        message=f"At the benchmark's size {sizes}: {said}",
        hint=failure.hint if failure is not None and failure.hint else _hint(ex, verdict),
        score=0.0,
    )


def plans_wanted(ex: Exercise, prepared: list[PreparedCase]) -> dict:
    """What the recording child is asked to record: per case its sizes and scalars (never an
    input array), and the benchmark's sizes, on every engine: a GPU times that plan, and every
    cap it meets there (host data, memory) gives the same verdict on the CPU (its scalars those
    of the first case: a scalar passed through to a kernel is replayed as the value the timed
    inputs carry)."""
    wanted = {
        str(p.index): {
            "dims": dict(p.case.dims),
            "scalars": {s.name: np.asarray(p.inputs[s.name]).item() for s in ex.spec.scalars},
        }
        for p in prepared
    }
    if ex.spec.benchmark is not None and prepared:
        wanted["bench"] = {"dims": dict(ex.spec.benchmark.dims), "scalars": wanted[str(prepared[0].index)]["scalars"]}
    return wanted


def _case_progress(prepared: list, case_timeout: float, progress, again: bool = False):
    """What the child's follower hears (a case index, seconds into it) as a line for `progress`."""
    where = {p.index: k for k, p in enumerate(prepared)}

    def hear(index, seconds: float) -> None:
        if index is None:
            progress("timing your kernel on the GPU")
            return
        k = where.get(index, 0)
        p = prepared[k]
        what = (
            f"running case '{p.case.name}' again, to look for a race"
            if again
            else f"case {k + 1} of {len(prepared)}, '{p.case.name}' {_fmt_dims(p.case.dims)}"
        )
        progress(f"{what}: {seconds:.0f} s of {case_timeout:g} s")

    return hear


def _stopped_case(p: PreparedCase, run, path: Path) -> CaseResult:
    """The case a stopped child was on: a crash, or the time limit, said with where the
    code was when it ran out (grader/checking/stuck.py) when the child told us."""
    if run.stopped == "crashed":
        return CaseResult(p.case.name, dict(p.case.dims), "crashed", f"The run died: {run.detail}.")
    from grader.checking.stuck import timeout_message

    try:
        source = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        source = ""
    message, line, text, hint = timeout_message(run.where, source, run.limit, run.phase)
    return CaseResult(p.case.name, dict(p.case.dims), "timeout", message, line=line, source=text, hint=hint)


def _expected_in_background(ex: Exercise, seed: int, base_seed: int | None):
    """((round, set, pick seed), future of its expected output at the picked elements): the
    grading process picks the timed launch to check and has its expected output computed in an
    oracle process while the child runs (seconds at 2^28 elements; grader/gpu/speed.py
    `expected_elsewhere`). `base_seed`: a graded run's shared benchmark seed."""
    from grader.gpu.speed import expected_elsewhere, new_check

    check_at = new_check()
    return check_at, expected_elsewhere(ex, seed, check_at, base_seed)

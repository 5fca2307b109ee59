"""A file's check, as a few named phases: prepare (seeds, the secret, the cases; the hand-in
read once) -> record (a recording child, grader/children/recording.py) -> replay (a child of
its own or the GPU's replayer, grader/children/; the kernel doctor beside a GPU) -> judge
(grader/checking/verdicts.py) -> time (a GPU's samples against the expected output this process
computed meanwhile). Every verdict is decided here, from data no child could write."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from grader import backend as _backend
from grader.checking.verdicts import (
    RACE_RERUNS,
    all_passed,
    failed_at_benchmark_size,
    failed_before_running,
    fmt_dims,
    judge_all,
    judge_speed,
    stopped_case,
    stopped_recording,
    summarise,
    with_speed,
)
from grader.children.stuck import engine_of
from grader.doctor.integration import result_report
from grader.doctor.summary import DOCTOR, DoctorReport
from grader.exercises import Exercise, exercise
from grader.result import CaseResult, CheckResult, Speed
from grader.settings import EXPECTED_TIMEOUT, CheckOptions
from grader.steps.cases import RERUN_STRIDE, PreparedCase, derived_seed, load_secret, new_seed, prepare, secret_file
from grader.steps.load import SubmissionError, checked_text


BENCH_SEED = 0
"""Graded checks draw the benchmark's base inputs from this and the secret (`check_file`)."""


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
    from grader.children.recording import RecordingStopped
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
        result = stopped_recording(check.ex, check.backend, check.shown_seed, stop, check.path, check.started)
        return replace(result, unsandboxed=check.unsandboxed)
    except SubmissionError as err:
        result = failed_before_running(check.ex, check.backend, check.shown_seed, err, check.started)
        return replace(result, unsandboxed=check.unsandboxed)
    result = _with_the_doctors_verdict(check, _judged(check, message, run), beside)
    failed_at_size = message.plans.get("bench")
    recorded_at_size = check.ex.spec.benchmark is None or hasattr(failed_at_size, "steps")
    if result.passed and not recorded_at_size:  # a Failure, or no plan at all: on every engine
        return failed_at_benchmark_size(result, check.ex, failed_at_size)
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
    """What replays the cases: a child of its own or the GPU's replayer (grader/children/task.py
    `Runner`)."""
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

    def task(self, message, cases: list, timed: bool = True, backend: str | None = None):
        """What a child replays: `cases` of this check (grader/children/task.py `ReplayTask`), with the
        seeds of its timing when `timed` and the check is timed."""
        from grader.children.task import ReplayTask, Timing

        timing = Timing(self.time_seed, self.bench_seed, tuple(self.expected[0])) if timed and self.timed else None
        return ReplayTask(
            self.ex,
            self.hand_in,
            message,
            tuple(cases),
            self.case_timeout,
            timing,
            self.device,
            self.sandboxed,
            tuple(self.private),
            self.kernel_files,
            backend,
        )


def _file_check(
    exercise_id: str, path: Path, options: CheckOptions, sandboxed: bool, progress, kernel_files: bool
) -> _FileCheck:
    """Seeds, the secret, the private folders and the prepared cases of one file's check; the
    timed launch's expected output starts computing in the background."""
    from grader.children.replayers import runner

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
    # round): a replayer makes them and their buffers once per run (grader/children/replayers.py)
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
    from grader.children.recording import record_in_child
    from grader.children.run import run_in_child
    from grader.children.spares import discard_ahead, start_ahead
    from grader.children.task import Hooks

    ex, prepared = check.ex, check.prepared
    # the checking child imports while the recording child records
    ahead = start_ahead(ex.id, check.private, check.device, check.sandboxed) if check.runs is run_in_child else None
    try:
        wanted = plans_wanted(ex, prepared)
        message = (
            recorded(wanted)
            if recorded is not None
            else record_in_child(
                ex, check.hand_in, wanted, check.case_timeout, private=check.private, sandboxed=check.sandboxed
            )
        )
    except BaseException:
        discard_ahead(ahead)
        raise
    beside = _doctor_beside(check, message)
    hooks = Hooks(
        progress=_case_progress(prepared, check.case_timeout, check.progress) if check.progress else None,
        worth_timing=(lambda outcomes: all_passed(ex, prepared, outcomes)) if check.timed else None,
        ahead=ahead,
    )
    return message, check.runs(check.task(message, prepared), hooks), beside


def _doctor_beside(check: _FileCheck, message):
    """On a GPU host, the kernel doctor's run of the smallest cases, started now (a CPU child,
    sandboxed as the check is), or None elsewhere."""
    from grader.checking import beside

    if check.backend != _backend.GPU:
        return None
    cases = beside.smallest(check.prepared)
    return cases, beside.start(check.task(message, cases, timed=False, backend="simulator"))


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
    from grader.children.task import Hooks

    twins = [replace(p, index=p.index + RERUN_STRIDE * k) for k in range(RACE_RERUNS)]
    progress = _case_progress(twins, check.case_timeout, check.progress, again=True) if check.progress else None
    again = check.runs(check.task(message, twins, timed=False), Hooks(progress=progress))
    return [again.outcomes.get(t.index) for t in twins]


def _judged(check: _FileCheck, message, run) -> CheckResult:
    """Every case the child finished, judged (`judge_all`), then the one it stopped on and those
    it never reached; the doctor's report; the verdict."""
    prepared = check.prepared
    finished = [p for p in prepared if p.index in run.outcomes]
    results = judge_all(check.ex, finished, run.outcomes, lambda p: _rerun(check, message, p))
    if run.stopped:
        results.append(stopped_case(prepared[len(finished)], run, check.path))
        for p in prepared[len(finished) + 1 :]:
            results.append(
                CaseResult(p.case.name, dict(p.case.dims), run.stopped, "not run: an earlier case stopped the run")
            )
    report = result_report(run.outcomes.values())
    if report is None and engine_of(run.where or []) == "doctor":  # killed before any outcome
        report = DoctorReport(DOCTOR)
    result = summarise(check.ex, check.backend, check.seed, results, check.started, graded=check.graded, doctor=report)
    return replace(result, unsandboxed=check.unsandboxed)


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
            else f"case {k + 1} of {len(prepared)}, '{p.case.name}' {fmt_dims(p.case.dims)}"
        )
        progress(f"{what}: {seconds:.0f} s of {case_timeout:g} s")

    return hear


def _expected_in_background(ex: Exercise, seed: int, base_seed: int | None):
    """((round, set, pick seed), future of its expected output at the picked elements): the
    grading process picks the timed launch to check and has its expected output computed in an
    oracle process while the child runs (seconds at 2^28 elements; grader/gpu/speed.py
    `expected_elsewhere`). `base_seed`: a graded run's shared benchmark seed."""
    from grader.gpu.speed import expected_elsewhere, new_check

    check_at = new_check()
    return check_at, expected_elsewhere(ex, seed, check_at, base_seed)

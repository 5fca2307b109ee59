"""The notebook's check: `check(exercise_id, launch)`, what a check cell calls (through the
facade, grader/__init__.py). The code `launch` uses is copied into a file and checked like one
(grader/checking/check.py `check_file`), its lines said as the learner's cell lines; a launch
that cannot be copied (a lambda, a global array) is recorded in the notebook's own process and
replayed in a child all the same."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from grader import backend as _backend
from grader.checking.check import check_file
from grader.checking.verdicts import RACE_RERUNS, failed_before_running, judge_all, summarise, judge_speed, with_speed
from grader.doctor.integration import case_executor, result_report
from grader.exercises import Exercise, exercise
from grader.result import CheckResult
from grader.settings import CASE_TIMEOUT
from grader.steps.cases import PreparedCase, new_seed, prepare
from grader.steps.execute import Outcome
from grader.steps.extract import NotExtractable, extract
from grader.steps.load import SubmissionError, check_signature


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

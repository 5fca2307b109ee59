"""The `replay` role: a task's recorded plans replayed on its cases' inputs, then (on a GPU)
timed. No code of the submission's runs here: its kernels are rebuilt from the hand-in's text of
their `def` (grader/replay/launch.py). A checking child of its own runs one task; a GPU's
replayer (grader/children/roles/serve.py) runs one after another (`served`).

The child reads task.json and plans.json, then each case's inputs just before it runs (the file
then gone: it holds no other case's data), and leaves outcome-<i>.npz and outcome-<i>.json per
case; it never judges. A child asked to time waits for the parent's word (TIME_GO, TIME_SKIP):
the parent lets only a submission that passed every case be timed.
"""

from __future__ import annotations

import json
import linecache
import time
from pathlib import Path

import numpy as np

from grader.backend import current  # importing grader chose the back end before numba loaded
from grader.children.folder import (
    COMPILED,
    IMPORTED,
    INPUTS,
    LOAD_ERROR,
    MAX_COMPILED_BYTES,
    OUTCOME_JSON,
    OUTCOME_NPZ,
    PLANS,
    READY,
    REFERENCES,
    SPEED,
    TASK,
    TIME_GO,
    TIME_SKIP,
    TIMED,
)
from grader.children.roles.common import install_guard, lower_cpu_limit, private, touch, write_json, write_npz
from grader.children.roles.common import writing
from grader.children.stuck import Lookout
from grader.compiler.client import start_helper
from grader.doctor.integration import case_executor, outcome_fields
from grader.exercises import exercise
from grader.paths import read_json
from grader.replay.schema import read_message
from grader.steps.cases import RERUN_STRIDE
from grader.steps.execute import Outcome
from grader.steps.explain import ErrorInfo
from grader.steps.judge import sampled_outputs


def run_task(folder: Path, served: bool = False) -> None:
    """Replay the task in `folder`: the cases, then (on a GPU) the timing. `served`: one task of
    a replayer that serves many, whose guard is installed already."""
    task = json.loads((folder / TASK).read_text())
    if task.get("cpu_seconds") and not served:
        lower_cpu_limit(task["cpu_seconds"])
    import_replay_code()
    from grader.gpu.arena import unready
    from grader.gpu.harness import settle

    unready()  # nothing kept is trusted to be as the grader made it once this task's kernels run
    clock = {"imported": time.perf_counter()}
    ex = exercise(task["exercise"])
    message = read_message((folder / PLANS).read_text())
    lookout = _guard_and_lookout(folder, task, served)
    try:  # the lookout stops with the task, however it ends (a replayer goes on to the next)
        rebuilt = _rebuilt_launches(folder, task, message)
        if rebuilt is None:  # load-error.json says why
            return
        functions, launches = rebuilt
        _compiled_before_the_cases(ex.spec, task, message, functions)
        touch(folder / READY)  # the parent's per-case clock starts now
        clock["loaded"] = time.perf_counter()
        _run_cases(folder, task, ex, message, launches)
        settle()  # nothing of the cases' runs on after them
    finally:
        lookout.stop()
    if task.get("time"):
        _time_when_told(folder, task, ex, launches, clock, served)


def _time_when_told(folder: Path, task: dict, ex, launches: dict, clock: dict, served: bool) -> None:
    """GPU only: make the benchmark's buffers ready while the parent judges the cases, then time
    if it says so (every case passed) and there is a benchmark plan."""
    clock["cases run"] = time.perf_counter()
    ready = "child: inputs and buffers made ready"
    if served and "bench" in launches and task.get("base_seed") is not None:
        from grader.gpu.speed import ready_for

        if not ready_for(ex, task["base_seed"]):  # while the grading process judges the cases
            ready = "child: kept inputs and buffers refreshed"
        _load_references(folder.parent, ex.id)
    clock["ready"] = time.perf_counter()
    if not _parent_says_time(folder) or "bench" not in launches:  # a case failed: no speed section
        return
    before = {
        "child: loading the file": clock["loaded"] - clock["imported"],
        "child: correctness cases": clock["cases run"] - clock["loaded"],
        ready: clock["ready"] - clock["cases run"],
        "child: waiting for the cases' verdicts": time.perf_counter() - clock["ready"],
    }
    _time_submission(folder, task, ex, launches["bench"], before, keep=served)


def _load_references(inbox: Path, exercise_id: str) -> None:
    """An exercise's references compiled ahead (REFERENCES, left by the grading process), added
    to this replayer's dispatchers before their first warm-up; once per exercise."""
    if exercise_id in _REFERENCES_LOADED:
        return
    _REFERENCES_LOADED.add(exercise_id)
    entries = read_json(inbox / REFERENCES.format(exercise_id), MAX_COMPILED_BYTES)
    if isinstance(entries, list):  # else not compiled yet: the warm-up compiles them
        from grader.replay.references import install_references

        install_references([e for e in entries if isinstance(e, dict)])


_REFERENCES_LOADED: set = set()


def import_replay_code() -> None:
    """Import what a task runs before its clock starts: loading the file is timed from after."""
    import grader.gpu.speed  # noqa: F401 - timing code bound before the kernels run
    import grader.replay.launch  # noqa: F401


def _guard_and_lookout(folder: Path, task: dict, served: bool):
    """Install the guard (a replayer's is installed already) and start the lookout that says where
    the code is when time runs out (grader/children/stuck.py); the parent's clock for loading the
    kernels starts here."""
    guard = None
    if not served:
        guard = install_guard(private(folder, task), folder, install=False)
        start_helper()  # the GPU compile check's process; the guard forbids starting it later
    lookout = Lookout(folder, task["submission"], write_json).start()
    touch(folder / IMPORTED)
    if guard is not None:
        guard.install()
    return lookout


def _rebuilt_launches(folder: Path, task: dict, message) -> tuple | None:
    """(kernel key -> its rebuilt function, plan key -> a `launch` replaying that plan with
    those kernels); None, with load-error.json written, when a kernel cannot be rebuilt."""
    from grader.gpu.arena import scratch
    from grader.replay.launch import RebuildError, launch_from, rebuild

    path = task["submission"]
    try:
        functions = rebuild(message.kernels, None if task.get("kernel_files") else path, task.get("source"))
    except RebuildError as err:
        text = linecache.getline(path, err.line).strip() if err.line else ""
        write_json(
            folder / LOAD_ERROR, {"verdict": "exception", "message": err.message, "line": err.line, "source": text}
        )
        return None
    options = {key: _kernel_options(desc) for key, desc in message.kernels.items()}
    jitted: dict = {}  # each kernel compiled once for every case and the benchmark
    compiled = read_json(folder / COMPILED, MAX_COMPILED_BYTES)  # compiled ahead (grader/children/compiling.py)
    compiled = compiled if isinstance(compiled, dict) else {}
    return functions, {  # the timed plan's own arrays at fixed places (a replayer's Pool; else as usual)
        key: launch_from(plan, functions, options, path, jitted, scratch if key == "bench" else None, compiled)
        for key, plan in message.plans.items()
        if hasattr(plan, "steps")
    }


def _compiled_before_the_cases(spec, task: dict, message, functions: dict) -> None:
    """On a CPU engine, the compile check of every kernel for every type its case plans launch
    it with (grader/replay/signatures.py), done now, while the grader's own allowance runs
    (grader/children/follow.py `CaseClock`): a case's time limit is the learner's kernels'
    alone, never the grader's compiling on a busy machine. Answers are remembered; a kernel
    the walk cannot follow is checked at its launch, as before."""
    if current() == "gpu":
        return
    from grader.compiler.client import compile_answer
    from grader.replay.signatures import launch_types

    for index in task["cases"]:
        plan = message.plans.get(str(index % RERUN_STRIDE))
        if not hasattr(plan, "steps"):
            continue
        for key, types in launch_types(plan, spec, task["dims"][str(index)]).items():
            for arg_types in types:
                if key in functions:
                    compile_answer(functions[key], (), arg_types)


def _case_inputs(folder: Path, index: int) -> dict:
    """One case's inputs, read just before it runs, their file then gone: the child holds no
    other case's data while a case's kernels run."""
    path = folder / INPUTS.format(index)
    with writing():
        with np.load(path) as data:
            inputs = {k: data[k] for k in data.files}
        path.unlink()
    return inputs


def _run_cases(folder: Path, task: dict, ex, message, launches: dict) -> None:
    """Each case's raw outcome, written for the parent as it finishes: outcome-<i>.npz and .json."""
    execute = case_executor()  # the kernel doctor without a GPU (grader/doctor/integration.py)
    for index in task["cases"]:
        key = str(index % RERUN_STRIDE)
        if key in launches:
            dims = task["dims"][str(index)]
            inputs = _case_inputs(folder, index)
            outcome = execute(ex.spec, launches[key], inputs, dims, learner_files=(task["submission"],))
            del inputs
        else:
            outcome = _unrecorded(message.plans.get(key))
        write_npz(folder / OUTCOME_NPZ.format(index), outcome.buffers)
        error = outcome.error.to_dict() if outcome.error else None
        write_json(
            folder / OUTCOME_JSON.format(index), {"error": error, "seconds": outcome.seconds, **outcome_fields(outcome)}
        )


def _kernel_options(desc: dict) -> dict:
    """What a replayed kernel is jitted with: fastmath (it changes results a GPU gives) and its
    declared signatures (a launch whose arguments fit none is refused, as numba-cuda refuses it)."""
    options = {"fastmath": True} if desc.get("options", {}).get("fastmath") is True else {}
    if desc.get("signatures"):
        options["signatures"] = desc["signatures"]
    return options


def _unrecorded(failure):
    """The outcome of a case whose `launch` could not be recorded: the recording child's account."""
    if failure is None:
        return Outcome({}, ErrorInfo("exception", "`launch` was not recorded for this case."), 0.0)
    info = ErrorInfo(
        failure.verdict, failure.message, failure.error_type, failure.line, failure.source, hint=failure.hint
    )
    return Outcome({}, info, 0.0)


def _parent_says_time(folder: Path) -> bool:
    """Wait for the parent's word on timing (TIME_GO or TIME_SKIP), left once it has judged
    every case's outcome (grader/children/follow.py)."""
    while True:
        if (folder / TIME_GO).exists():
            return True
        if (folder / TIME_SKIP).exists():
            return False
        time.sleep(0.002)


def _time_submission(folder: Path, task: dict, ex, launch, before: dict, keep: bool = False) -> None:
    """GPU only: paired timings; the learner's sampled timed outputs go back as files. `keep`:
    the benchmark's inputs and buffers stay for the next task (a replayer)."""
    from grader.gpu.speed import collect

    try:
        samples = collect(
            ex, launch, task["seed"], check=tuple(task["check"]), base_seed=task.get("base_seed"), keep=keep
        )
    except Exception as exc:  # noqa: BLE001 - reported as a speed failure, not a crash
        write_json(folder / SPEED, {"error": f"{type(exc).__name__}: {exc}"})
        return
    clock = time.perf_counter()
    checked = []
    pick_seed = task["check"][2] if len(task["check"]) > 2 else None  # the grading process's
    for k, (name, round_index, set_index, buffers) in enumerate(samples.checked):
        if name == "yours":
            if pick_seed is not None:  # the elements it judges, not a whole 512 MiB output
                buffers = sampled_outputs(ex.spec, dict(ex.spec.benchmark.dims), buffers, pick_seed)
            write_npz(folder / TIMED.format(k), buffers)
            checked.append([name, round_index, set_index, TIMED.format(k)])
    write_json(
        folder / SPEED,
        {
            "seconds": samples.seconds,
            "after_end_seconds": samples.after_end_seconds,
            "rounds": samples.rounds,
            "stop_reason": samples.stop_reason,
            "checked": checked,
            "sampled_with": pick_seed,
            "sparse": samples.sparse,
            "earlier": samples.earlier,
            "phases": {**before, **samples.phases, "timed output to the grader": time.perf_counter() - clock},
        },
    )

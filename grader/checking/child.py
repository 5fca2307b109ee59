"""The child process that runs one submission: `python -m grader.checking.child TASK_DIR`.

The parent writes task.json and one inputs-<i>.npz per case into TASK_DIR. The child reads
all of it, installs the guard (grader/containment/guard.py), loads the submission, runs each case and
leaves outcome-<i>.npz (the raw fenced output buffers) and outcome-<i>.json (error, seconds)
behind; it never judges. A load failure goes to load-error.json. Every result is written
atomically (temp file, then rename) and only by the grader's own code. While the file loads
and the cases run, a lookout thread answers the parent's question where the code is when a
case runs out of time (grader/checking/stuck.py). A child asked to time (on a GPU) then waits
for the parent's word: the parent judges every outcome and lets only a submission that passed
every case be timed (TIME_GO, TIME_SKIP).

`python -m grader.checking.child TASK_DIR --spare 1` starts before its task exists: it imports
and warms up the compiler, then waits for task.json (grader/checking/isolate.py's keep_warm).
Every child, spare or not, ends itself when its grader has gone (`--lifeline FD`); its exit
closes its CUDA context. A spare makes no CUDA context before its task arrives
(grader/checking/isolate.py says why).
"""

from __future__ import annotations

import json
import linecache
import os
import resource
import sys
import threading
import time
from pathlib import Path

import numpy as np

from grader.backend import current  # importing grader chose the back end before numba loaded
from grader.checking.stuck import Lookout, snapshot
from grader.compiler.client import start_helper
from grader.compiler.prebuilt import arch_of
from grader.containment.guard import Guard, apply_limits
from grader.containment.process_cap import limit_own_processes
from grader.doctor.integration import case_executor, outcome_fields
from grader.exercises import LADDER, exercise
from grader.paths import ROOT, data_dir, read_json, write_atomically
from grader.replay.plan import Failure, Message
from grader.replay.schema import read_message
from grader.steps.cases import RERUN_STRIDE
from grader.steps.judge import sampled_outputs
from grader.steps.execute import Outcome
from grader.steps.explain import ErrorInfo
from grader.steps.load import SubmissionError, load_launch

GUARD = None
TIME_GO, TIME_SKIP = "time-go", "time-skip"
"""What the parent leaves in TASK_DIR once every case's outcome is in and judged: a child asked
to time waits for one of them, and times only a submission that passed every case (a failing
one gets no speed section: timing it would hold the GPU for nothing)."""


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    with GUARD.writing():
        tmp.write_text(json.dumps(data))
        os.replace(tmp, path)


def _write_npz(path: Path, arrays: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with GUARD.writing():
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
        os.replace(tmp, path)


def _case_inputs(task_dir: Path, index: int) -> dict:
    """One case's inputs, read just before it runs, their file then gone: the child holds no
    other case's data while a case's kernels run."""
    path = task_dir / f"inputs-{index}.npz"
    with GUARD.writing():
        with np.load(path) as data:
            inputs = {k: data[k] for k in data.files}
        path.unlink()
    return inputs


def wait_as_spare(task_dir: Path) -> None:
    """A spare (grader/checking/isolate.py keep_warm): do the slow start-up now, then wait for the
    parent's task.json. The lifeline ends it if the parent goes first (`follow_lifeline`: also
    when the parent died before this process started)."""
    _import_replay_code()
    import numba.cuda  # noqa: F401 - the back end's CUDA API, which an exercise's spec imports first

    start_helper()  # the compile helper's start-up too (the task would start it)
    if current() == "gpu":
        _warm_up_compiler()
    while not (task_dir / "task.json").exists():
        time.sleep(0.005)


def _warm_up_compiler() -> None:
    """The compiler's first use (NVVM, libdevice: ~0.6 s) done now; no CUDA context needed."""
    try:
        from numba import cuda, float32

        cuda.compile_ptx(_warm_up_kernel, (float32[:],), cc=(7, 5))
    except Exception:  # noqa: BLE001 - only a head start; the task compiles what it needs
        pass


def _warm_up_kernel(a):
    a[0] = 1.0


def _lower_cpu_limit(seconds: int) -> None:
    """The task's CPU allowance from now on (a spare started with a generous one); never raised."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    limit = int(used.ru_utime + used.ru_stime) + 1 + seconds
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if soft != resource.RLIM_INFINITY and soft <= limit:
        return
    resource.setrlimit(
        resource.RLIMIT_CPU, (limit, limit + 5 if hard == resource.RLIM_INFINITY else min(hard, limit + 5))
    )


def run_task(task_dir: Path, served: bool = False) -> None:
    """Replay the recorded plans (plans.json, written and checked by the grading process) on the
    task's inputs: the cases, then (on a GPU) the timing. No code of the submission's runs here:
    its kernels are rebuilt from their `def` (grader/replay/replayer.py). `served`: one task of a
    replayer that serves many (`serve`), whose guard is installed already."""
    task = json.loads((task_dir / "task.json").read_text())
    if task.get("cpu_seconds") and not served:
        _lower_cpu_limit(task["cpu_seconds"])
    _import_replay_code()
    from grader.gpu.arena import unready
    from grader.gpu.harness import settle

    unready()  # nothing kept is trusted to be as the grader made it once this task's kernels run
    clock = {"imported": time.perf_counter()}
    ex = exercise(task["exercise"])
    message = read_message((task_dir / "plans.json").read_text())
    lookout = _guard_and_lookout(task_dir, task, served)
    try:  # the lookout stops with the task, however it ends (a replayer goes on to the next)
        rebuilt = _rebuilt_launches(task_dir, task, message)
        if rebuilt is None:  # load-error.json says why
            return
        functions, launches = rebuilt
        _compiled_before_the_cases(ex.spec, task, message, functions)
        with GUARD.writing():
            (task_dir / "ready").touch()  # the parent's per-case clock starts now
        clock["loaded"] = time.perf_counter()
        _run_cases(task_dir, task, ex, message, launches)
        settle()  # nothing of the cases' runs on after them
    finally:
        lookout.stop()
    if task.get("time"):
        clock["cases run"] = time.perf_counter()
        ready = "child: inputs and buffers made ready"
        if served and "bench" in launches and task.get("base_seed") is not None:
            from grader.gpu.speed import ready_for

            if not ready_for(ex, task["base_seed"]):  # while the grading process judges the cases
                ready = "child: kept inputs and buffers refreshed"
            _load_references(task_dir.parent, ex.id)
        clock["ready"] = time.perf_counter()
        if not _parent_says_time(task_dir) or "bench" not in launches:  # a case failed: no speed section
            return
        before = {
            "child: loading the file": clock["loaded"] - clock["imported"],
            "child: correctness cases": clock["cases run"] - clock["loaded"],
            ready: clock["ready"] - clock["cases run"],
            "child: waiting for the cases' verdicts": time.perf_counter() - clock["ready"],
        }
        _time_submission(task_dir, task, ex, launches["bench"], before, keep=served)


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


def _import_replay_code() -> None:
    """Import what a task runs before its clock starts: loading the file is timed from after."""
    import grader.gpu.speed  # noqa: F401 - timing code bound before the kernels run
    import grader.replay.replayer  # noqa: F401


def _guard_and_lookout(task_dir: Path, task: dict, served: bool):
    """Install the guard (a replayer's is installed already) and start the lookout that says where
    the code is when time runs out (grader/checking/stuck.py); the parent's clock for loading the
    file starts here."""
    global GUARD
    if not served:
        GUARD = Guard(_private(task_dir, task), task_dir)
        start_helper()  # the GPU compile check's process; the guard forbids starting it later
    lookout = Lookout(task_dir, task["submission"], _write_json).start()
    with GUARD.writing():
        (task_dir / "imported").touch()
    if not served:
        GUARD.install()
    return lookout


def _rebuilt_launches(task_dir: Path, task: dict, message) -> tuple | None:
    """(kernel key -> its rebuilt function, plan key -> a `launch` replaying that plan with
    those kernels); None, with load-error.json written, when a kernel cannot be rebuilt."""
    from grader.replay.replayer import RebuildError, launch_from, rebuild

    path = task["submission"]
    try:
        functions = rebuild(message.kernels, None if task.get("kernel_files") else path, task.get("source"))
    except RebuildError as err:
        text = linecache.getline(path, err.line).strip() if err.line else ""
        _write_json(
            task_dir / "load-error.json",
            {"verdict": "exception", "message": err.message, "line": err.line, "source": text},
        )
        return None
    options = {key: _kernel_options(desc) for key, desc in message.kernels.items()}
    from grader.gpu.arena import scratch

    jitted: dict = {}  # each kernel compiled once for every case and the benchmark
    compiled = _compiled_ahead(task_dir)
    return functions, {  # the timed plan's own arrays at fixed places (a replayer's Pool; else as usual)
        key: launch_from(plan, functions, options, path, jitted, scratch if key == "bench" else None, compiled)
        for key, plan in message.plans.items()
        if hasattr(plan, "steps")
    }


def _compiled_before_the_cases(spec, task: dict, message, functions: dict) -> None:
    """On a CPU engine, the compile check of every kernel for every type its case plans launch
    it with (grader/replay/signatures.py), done now, while the grader's own allowance runs
    (grader/checking/isolate.py `_CaseClock`): a case's time limit is the learner's kernels'
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


def _compiled_ahead(task_dir: Path) -> dict:
    """The task's kernels as compiled ahead by the grading process's compiling child (COMPILED,
    written by the grading process; grader/checking/compiling.py), or {}."""
    compiled = read_json(task_dir / COMPILED, MAX_COMPILED_BYTES)
    return compiled if isinstance(compiled, dict) else {}


def _run_cases(task_dir: Path, task: dict, ex, message, launches: dict) -> None:
    """Each case's raw outcome, written for the parent as it finishes: outcome-<i>.npz and .json."""
    execute = case_executor()  # the kernel doctor without a GPU (grader/doctor/integration.py)
    for index in task["cases"]:
        key = str(index % RERUN_STRIDE)
        if key in launches:
            dims = task["dims"][str(index)]
            inputs = _case_inputs(task_dir, index)
            outcome = execute(ex.spec, launches[key], inputs, dims, learner_files=(task["submission"],))
            del inputs
        else:
            outcome = _unrecorded(message.plans.get(key))
        _write_npz(task_dir / f"outcome-{index}.npz", outcome.buffers)
        error = outcome.error.to_dict() if outcome.error else None
        _write_json(
            task_dir / f"outcome-{index}.json",
            {"error": error, "seconds": outcome.seconds, **outcome_fields(outcome)},
        )


def serve(inbox: Path, fd: int) -> None:
    """A replayer that serves one GPU for a whole grading run (`--serve FD`,
    grader/checking/replayers.py): it reads task folder names, one per line, from FD and runs
    each task in its folder under `inbox` as a child of its own would, then leaves DONE there.
    What it keeps from one task to the next is grader code's alone: the reference kernels
    compiled once, the benchmark inputs and the buffers they are timed in (grader/gpu/harness.py).
    No code of a submission's runs here on the host: on a GPU its kernels run on the device."""
    global GUARD
    from grader.gpu.harness import settle

    specs = [exercise(exercise_id).spec for exercise_id in LADDER]  # read before the guard hides them
    if current() == "gpu":  # the benchmark's buffers first, at the same places in every replayer
        from grader.gpu.arena import SCRATCH_BYTES, arena_bytes, reserve

        reserve(max(arena_bytes(spec) for spec in specs if spec.benchmark) + SCRATCH_BYTES)
        _say_arch(inbox)
    GUARD = Guard(_private(None, {}), inbox)
    start_helper()
    GUARD.install()
    with os.fdopen(fd, "r", closefd=True) as names:
        for line in names:
            name = line.strip()
            if not name.isidentifier():  # only names the grading process made: task_<n>
                continue
            task_dir = inbox / name
            try:
                run_task(task_dir, served=True)
            except Exception as exc:  # noqa: BLE001 - this task's failure, said to its parent
                _write_json(task_dir / "served-error.json", {"error": f"{type(exc).__name__}: {exc}"[:2000]})
            settle()  # no launch of this task's runs on into the next
            with GUARD.writing():
                (task_dir / DONE).touch()


def _say_arch(inbox: Path) -> None:
    """ARCH in the inbox: what the grading process has kernels compiled for from now on."""
    from numba import cuda

    write_atomically(inbox / ARCH, json.dumps(list(arch_of(cuda.get_current_device().compute_capability))))


DONE = "done"
"""What a replayer or a compiling child leaves in a task's folder once it has finished with it."""
REQUESTS, ANSWERS = "requests.json", "answers.json"
"""A compiling child's task: the kernels to compile (grader/checking/compiling.py), its answers."""
COMPILED, ARCH, REFERENCES = "compiled.json", "arch.json", "references-{}.json"
"""A replayer's task: its kernels compiled ahead (grader/checking/compiling.py); what a replayer
says on starting: the target its device's kernels compile for (grader/compiler/prebuilt.py); in
its inbox, an exercise's references compiled ahead (grader/replay/references.py)."""
MAX_COMPILED_BYTES = 64 << 20
"""The most a replayer reads of COMPILED or of one exercise's REFERENCES."""


def serve_compiles(inbox: Path, fd: int) -> None:
    """A compiling child (`--serve FD --compiling 1`, grader/checking/compiling.py): it reads task
    folder names from FD and compiles the kernels each folder's requests.json describes
    (grader/compiler/server.py `compile_request`), leaving answers.json, then DONE. It holds no
    input, no secret and no GPU: like the replayer, it builds each kernel from its `def` and
    never runs it."""
    global GUARD
    from grader.compiler.server import compile_request
    from grader.replay.references import references_compiled

    _warm_up_compiler()
    for exercise_id in LADDER:  # the references, read before the guard hides kernels/
        exercise(exercise_id)
    GUARD = Guard(_private(None, {}), inbox)
    GUARD.install()
    with os.fdopen(fd, "r", closefd=True) as names:
        for line in names:
            name = line.strip()
            if not name.isidentifier():
                continue
            task_dir = inbox / name
            answers = []
            try:
                for request in json.loads((task_dir / REQUESTS).read_text()):
                    if "references" in request:  # an exercise's baseline and target
                        kernels = references_compiled(str(request["references"]), tuple(request["cc"]))
                        answers.append({"status": "ok", "kernels": kernels})
                    else:
                        answers.append(compile_request(request))
            except Exception as exc:  # noqa: BLE001 - the replayer compiles what this could not
                answers.append({"status": "unchecked", "why": f"{type(exc).__name__}: {exc}"[:2000]})
            _write_json(task_dir / ANSWERS, {"answers": answers})
            with GUARD.writing():
                (task_dir / DONE).touch()


def _private(task_dir: Path, task: dict) -> list:
    """What the guard keeps a child from reading: the course's private folders and the task's."""
    own = [task_dir] if task_dir is not None else []  # a replayer reads the folders it is handed
    return [ROOT / "solutions", ROOT / "kernels", ROOT / "tests", data_dir(), *own, *task.get("private", [])]


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


def _parent_says_time(task_dir: Path) -> bool:
    """Wait for the parent's word on timing (TIME_GO or TIME_SKIP), left once it has judged
    every case's outcome (grader/checking/isolate.py)."""
    while True:
        if (task_dir / TIME_GO).exists():
            return True
        if (task_dir / TIME_SKIP).exists():
            return False
        time.sleep(0.002)


def _time_submission(task_dir: Path, task: dict, ex, launch, before: dict, keep: bool = False) -> None:
    """GPU only: paired timings; the learner's sampled timed outputs go back as files. `keep`:
    the benchmark's inputs and buffers stay for the next task (a replayer, `serve`)."""
    from grader.gpu.speed import collect

    try:
        samples = collect(
            ex,
            launch,
            task["seed"],
            check=tuple(task["check"]),
            base_seed=task.get("base_seed"),
            keep=keep,
        )
    except Exception as exc:  # noqa: BLE001 - reported as a speed failure, not a crash
        _write_json(task_dir / "speed.json", {"error": f"{type(exc).__name__}: {exc}"})
        return
    clock = time.perf_counter()
    checked = []
    pick_seed = task["check"][2] if len(task["check"]) > 2 else None  # the grading process's
    for k, (name, round_index, set_index, buffers) in enumerate(samples.checked):
        if name == "yours":
            if pick_seed is not None:  # the elements it judges, not a whole 512 MiB output
                buffers = sampled_outputs(ex.spec, dict(ex.spec.benchmark.dims), buffers, pick_seed)
            _write_npz(task_dir / f"timed-{k}.npz", buffers)
            checked.append([name, round_index, set_index, f"timed-{k}.npz"])
    _write_json(
        task_dir / "speed.json",
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


def follow_lifeline(fd: int) -> None:
    """End this process when the grader has gone: `fd` reads end-of-file then (grader/checking/isolate.py
    `_lifeline`), whatever this process is doing, a spare waiting or a task running."""

    def wait():
        try:
            while os.read(fd, 1):
                pass
        except OSError:
            pass
        os._exit(0)

    threading.Thread(target=wait, name="zerogpu-lifeline", daemon=True).start()


def _arguments(argv: list) -> dict:
    """TASK_DIR [--spare 1 | --serve FD [--compiling 1] | --record FD [--where FD]] [--cpu SECONDS]
    [--address-space BYTES] [--processes N] [--lifeline FD]"""
    args = {"task_dir": Path(argv[0])}
    for flag, value in zip(argv[1::2], argv[2::2]):
        name = flag.lstrip("-").replace("-", "_")
        args[name] = int(value)
    return args


def _record(ex, source: str, path: str, wanted: dict, recorder, phase: list):
    """The message for `wanted` (plan key -> {"dims", "scalars"}): the file's load failure, or a
    plan or a failure per key."""
    from grader.replay.record import record_cases

    try:
        launch = load_launch(ex.spec, source, path)
    except SubmissionError as err:
        return Message(Failure(err.verdict, err.message, err.line, err.source), {}, {})
    phase[0] = "running"
    return Message(None, record_cases(recorder, launch, ex.spec, wanted, (path,)), recorder.kernels)


def _report_where(fd: int, path: str, phase: list) -> None:
    """The recording child's lookout: four times a second, one line on `fd` saying which line of
    the submission each thread is on, and whether the file is still loading. The grading process
    reads the last line only when time has run out (grader/checking/recording.py); it never
    decides anything."""

    def run():
        me = threading.get_ident()
        while True:
            time.sleep(0.25)
            try:
                os.write(fd, (json.dumps({"phase": phase[0], "places": snapshot(path, skip=(me,))}) + "\n").encode())
            except Exception:  # noqa: BLE001 - a closed or full pipe: the grader says what it knows
                return

    threading.Thread(target=run, name="zerogpu-where", daemon=True).start()


def wait_to_record(task_dir: Path) -> None:
    """A recording child started ahead: numba and the recorder imported now, then wait for the
    parent's task.json (the lifeline ends it if the parent goes first)."""
    import numba.cuda.simulator.kernel  # noqa: F401 - numba's CUDA API (this child's back end), which `recording` patches
    import grader.replay.record  # noqa: F401

    while not (task_dir / "task.json").exists():
        time.sleep(0.005)


def record_task(task_dir: Path, fd: int, where: int | None = None) -> None:
    """The recording child (`--record FD`): load the submission, call its `launch` on placeholders
    once per plan the task asks for (grader/replay/record.py), and write the one message
    (grader/replay/plan.py) to FD, a pipe only the grading process reads. Holds no input, no
    secret, no GPU context; decides nothing."""
    global GUARD
    task = json.loads((task_dir / "task.json").read_text())
    if task.get("cpu_seconds"):  # a child started ahead had a generous allowance until now
        _lower_cpu_limit(task["cpu_seconds"])
    from grader.replay.record import Recorder, recording

    ex = exercise(task["exercise"])
    path = task["submission"]
    source = Path(path).read_bytes()  # decoded by load_launch: a byte that is not text is a verdict
    recorder = Recorder()
    GUARD = Guard(_private(task_dir, task), task_dir)
    GUARD.install()
    recorder.filename = path
    phase = ["loading"]
    if where is not None:
        _report_where(where, path, phase)
    with recording(recorder, task.get("device")):  # before the file loads: names it imports are ours
        message = _record(ex, source, path, task["plans"], recorder, phase)
    data = message.to_json().encode()
    with os.fdopen(fd, "wb", closefd=True) as pipe:
        pipe.write(data)


if __name__ == "__main__":
    args = _arguments(sys.argv[1:])
    if "lifeline" in args:
        follow_lifeline(args["lifeline"])
    if "cpu" in args:  # first: nothing of the submission's has run yet
        apply_limits(args["cpu"], args.get("address_space"))
    if "processes" in args:  # inside the sandbox, where the kernel counts its own tasks only
        limit_own_processes(args["processes"])
    if "record" in args:
        if "spare" in args:  # started ahead (grader/checking/recording.py `record_ahead`)
            wait_to_record(args["task_dir"])
        record_task(args["task_dir"], args["record"], args.get("where"))
        sys.stdout.flush()
        os._exit(0)
    if "serve" in args and args.get("compiling"):
        serve_compiles(args["task_dir"], args["serve"])
    elif "serve" in args:
        serve(args["task_dir"], args["serve"])
    else:
        if "spare" in args:
            wait_as_spare(args["task_dir"])
        run_task(args["task_dir"])
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown: simulator threads must not delay the exit

"""Run a submission's cases in a child process with a time limit, results out of band."""

from __future__ import annotations

import atexit
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from grader.backend import current
from grader.steps.cases import PreparedCase
from grader.doctor.integration import with_report
from grader.steps.explain import ErrorInfo
from grader.steps.load import SubmissionError
from grader.exercises import ROOT
from grader.steps.execute import Outcome
from grader.containment.guard import scrubbed_env
from grader.containment import process_cap, sandbox, scratch
from grader.checking import stuck
from grader.checking.capture import CappedOutput
from grader.checking.child import TIME_GO, TIME_SKIP
from grader.paths import data_dir
from grader.settings import forced_backend
from grader.gpu.harness import MIN_ROUNDS, Samples


STARTUP_SECONDS = 30.0
"""Allowance for starting Python and importing numba before the first case."""
SIMULATOR_ADDRESS_SPACE = 16 << 30
"""The simulator's threads each reserve a stack: 1024 threads need ~8 GiB of address space."""
MAX_SPARES_PER_DEVICE = 4
"""Spares waiting at once per back end and device (a class graded in the sandbox keeps one per
exercise: each holds an imported Python, about 100 MB)."""
SPARE_CPU_SECONDS = 3600
"""A spare child's CPU limit until its task arrives; it then lowers it to the task's own."""


@dataclass
class ChildRun:
    outcomes: dict
    """Case index -> Outcome, for every case the child finished."""
    stopped: str | None = None
    """None, or "timeout"/"crashed" when the child did not finish every case."""
    detail: str = ""
    samples: object = None
    """GPU timing samples (grader.gpu.harness.Samples), or an error string, when asked for."""
    startup_seconds: float | None = None
    """From starting the child to its imports done (Python, numba, the grader)."""
    limit: float = 0.0
    """The time limit that stopped the child, in seconds (with `stopped` "timeout")."""
    where: list = field(default_factory=list)
    """Where the child's code was when the time limit ran out (grader/checking/stuck.py), as
    it said: places in the submission, GPU threads first; empty when it did not say."""
    phase: str = ""
    """What the time limit stopped: "starting" (Python and the grader), "loading" (the
    submission's file) or "running" (a case)."""


KILL_WAIT_SECONDS = 10.0
"""How long a killed child may take to go (a GPU driver can hold a dying process briefly);
past it the child is left to a reaper thread rather than holding up the grader."""


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=KILL_WAIT_SECONDS)
    except subprocess.TimeoutExpired:
        threading.Thread(target=proc.wait, name="zerogpu-reaper", daemon=True).start()


class TaskProcesses:
    """Every child one grading task starts, so that the coordinating thread can end the task
    from outside when it misses its deadline (grader/classroom/grading.py), whatever its worker is
    waiting on. A child started after the task was cancelled is killed at once."""

    def __init__(self):
        self._lock = threading.Lock()
        self._procs: list = []
        self._on_cancel: list = []
        self.cancelled = False

    def on_cancel(self, stop) -> None:
        """Call `stop()` if the task is cancelled: what ends work done for it by a process it does
        not own (a replayer, grader/checking/replayers.py)."""
        with self._lock:
            self._on_cancel.append(stop)
            cancelled = self.cancelled
        if cancelled:
            stop()

    def add(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._procs.append(proc)
            cancelled = self.cancelled
        if cancelled:
            _kill(proc)

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            procs, stops = list(self._procs), list(self._on_cancel)
        for proc in procs:
            _kill(proc)
        for stop in stops:
            stop()


_task = threading.local()


@contextmanager
def tracked(processes: TaskProcesses):
    """Children started by this thread inside belong to `processes`."""
    _task.processes = processes
    try:
        yield processes
    finally:
        _task.processes = None


def track(proc: subprocess.Popen) -> None:
    processes = getattr(_task, "processes", None)
    if processes is not None:
        processes.add(proc)


def task_cancelled() -> bool:
    """Has this thread's task been cancelled (the class's deadline)?"""
    processes = getattr(_task, "processes", None)
    return processes is not None and processes.cancelled


def on_cancel(stop) -> None:
    """`stop()` is called if this thread's task is cancelled (`TaskProcesses.on_cancel`)."""
    processes = getattr(_task, "processes", None)
    if processes is not None:
        processes.on_cancel(stop)


def _read_outcome(task_dir: Path, index: int) -> Outcome:
    meta = json.loads((task_dir / f"outcome-{index}.json").read_text())
    with np.load(task_dir / f"outcome-{index}.npz") as data:
        buffers = {k: data[k] for k in data.files}
    error = ErrorInfo.from_dict(meta["error"]) if meta["error"] else None
    return with_report(Outcome(buffers, error, meta["seconds"]), meta)


SPEED_TIMEOUT = 180.0


def _read_samples(task_dir: Path):
    data = json.loads((task_dir / "speed.json").read_text())
    if "error" in data:
        return data["error"]
    checked = []
    for name, round_index, set_index, filename in data["checked"]:
        with np.load(task_dir / filename) as npz:
            checked.append((name, round_index, set_index, {k: npz[k] for k in npz.files}))
    return Samples(
        data["seconds"],
        data["after_end_seconds"],
        checked,
        data["rounds"],
        data["stop_reason"],
        data.get("phases", {}),
        data.get("sampled_with"),
        [n for n in data.get("sparse", []) if n in data["seconds"]],
        MIN_ROUNDS,  # what the child times with, and what this process drew the check from
        {n: [float(t) for t in ts] for n, ts in data.get("earlier", {}).items() if n in data["seconds"]},
    )


class _Spare:
    """A child started ahead of its task: Python, numba and the grader imported and the
    compiler warmed up while the previous submission ran; it waits for task.json
    (grader/checking/child.py). Every submission still gets a fresh process of its own.
    `sandbox`: None, or (exercise id, private folders): a sandboxed spare's mounts depend on
    those and not on the submission, which arrives in its task folder.

    A spare makes no CUDA context while it waits: every check's GPU allocations then come in
    the same order (context, correctness cases, benchmark arena), and so land at the same
    places. Kernels bound by atomics on one address take one of two speeds depending on where
    it lands: when spares compiled the baseline and target ahead (launching them once) and
    checks started cold did not, the histogram's solution got either speed
    (docs/BENCHMARKS-LOG.md, "Buffer placement")."""

    def __init__(self, backend: str, device: int | None, sandbox: tuple | None = None):
        self.tmp = scratch.TemporaryFolder(prefix="zerogpu-")
        self.task_dir = Path(self.tmp.name)
        self.born = next(_births)
        work = self.task_dir / "work"
        work.mkdir()
        contain = contained(sandbox[0], sandbox[1]) if sandbox else None
        self.proc = _spawn(
            self.task_dir,
            work,
            scrubbed_env(work, ROOT, backend, device),
            SPARE_CPU_SECONDS,
            backend,
            spare=True,
            contain=contain,
        )

    def discard(self) -> None:
        if self.proc.poll() is None:
            _kill(self.proc)
        _remove_cgroup(self.proc)
        self.tmp.cleanup()


def _remove_cgroup(proc) -> None:
    if getattr(proc, "cgroup", None) is not None:
        process_cap.remove_cgroup(proc.cgroup)


_births = itertools.count()
_spares: dict = {}
"""Key -> the spares waiting for it, oldest first."""
_starting: dict = {}
"""Key -> how many spares for it are being started now."""
_spares_lock = threading.Lock()
_keep_warm = 0
_per_key = 1
"""Spares kept waiting per key: several checks of one exercise may start at once on one device."""


@contextmanager
def keep_warm(spares: int = 1):
    """While inside, each child started also starts a spare for the next one on the same
    back end and device: for graders that check many files in a row (a class, bench/trust.py).
    About 1.5 s of each check (imports, the compiler's first use) then overlaps the one before.
    `spares`: how many to keep waiting per key (class grading: the checks one device runs at once)."""
    global _keep_warm, _per_key
    with _spares_lock:
        _keep_warm += 1
        before = _per_key
        _per_key = max(_per_key, spares)
    try:
        yield
    finally:
        with _spares_lock:
            _keep_warm -= 1
            _per_key = before
            leftovers = [s for pool in _spares.values() for s in pool] if not _keep_warm else []
            if not _keep_warm:
                _spares.clear()
        for spare in leftovers:
            spare.discard()


def spare_ahead(device: int | None = None) -> None:
    """Start a spare checking child for the next unsandboxed check now, unless one waits or is on
    its way: a notebook's checks come minutes apart, so its facade starts one while the learner
    reads a result, where `keep_warm` starts the next during the check (a class's checks follow
    one another). A spare started here is not replaced when taken."""
    key = _key("", (), device, False)
    with _spares_lock:
        if _spares.get(key) or _starting.get(key):
            return
        _starting[key] = 1
    try:
        spare = _spawner().submit(_Spare, *key).result()
    finally:
        with _spares_lock:
            _starting[key] -= 1
    with _spares_lock:
        _spares.setdefault(key, []).append(spare)


def waiting_spares() -> list:
    """(key, spare) for every spare waiting now, oldest first within a key."""
    with _spares_lock:
        return [(key, spare) for key, pool in _spares.items() for spare in pool]


def _take_spare(key):
    with _spares_lock:
        pool = _spares.get(key) or []
        spare = pool.pop(0) if pool else None
        if not pool:
            _spares.pop(key, None)
    if spare is not None and spare.proc.poll() is not None:  # died waiting: not usable
        spare.discard()
        spare = None
    if spare is not None:
        track(spare.proc)
    return spare


def _replace_spare(key) -> None:
    """Discard the spares waiting for `key`'s next tasks and start others: after a child
    crashed, hung or met a GPU fault, no process started beside it is trusted."""
    with _spares_lock:
        stale = _spares.pop(key, [])
    for spare in stale:
        spare.discard()
    _refill_spare(key)


GPU_FAULTS = ("CudaAPIError", "CudaDriverError", "CudaSupportError", "NvvmError", "LinkerError")
"""Errors after which a process's CUDA context may be broken (an illegal address, a launch
failure): the device's spare is replaced before the next task."""


def _faulted(run: "ChildRun") -> bool:
    if run.stopped:
        return True
    return any(o.error is not None and o.error.error_type in GPU_FAULTS for o in run.outcomes.values())


_spawner_pool = None


def _spawner() -> ThreadPoolExecutor:
    """The one thread that starts every spare. bwrap's --die-with-parent kills a sandbox when
    the *thread* that started it ends (PR_SET_PDEATHSIG), and a class's task threads end with
    their task, before the spare they started is used; this thread lives as long as we do."""
    global _spawner_pool
    with _spares_lock:
        if _spawner_pool is None:
            _spawner_pool = ThreadPoolExecutor(1, thread_name_prefix="zerogpu-spares")
        return _spawner_pool


def _refill_spare(key) -> None:
    """Start spares for `key` until `_per_key` wait or are on their way; past a few per device
    (MAX_SPARES_PER_DEVICE, or `_per_key` if more), the oldest of other keys go first."""
    with _spares_lock:
        need = _per_key - len(_spares.get(key, ())) - _starting.get(key, 0) if _keep_warm else 0
        if need <= 0:
            return
        _starting[key] = _starting.get(key, 0) + need
    for _ in range(need):
        try:
            spare = _spawner().submit(_Spare, *key).result()
        except BaseException:
            with _spares_lock:
                _starting[key] -= 1
            raise
        unwanted = [spare]
        with _spares_lock:
            _starting[key] -= 1
            if _keep_warm and len(_spares.get(key, ())) < _per_key:
                _spares.setdefault(key, []).append(spare)
                unwanted = _over_the_bound(key)
        for old in unwanted:
            old.discard()


def _over_the_bound(key) -> list:
    """Spares of `key`'s back end and device past the bound, removed from the pools (the lock
    held): the oldest of other keys first (sandboxed spares are kept per exercise)."""
    limit = max(MAX_SPARES_PER_DEVICE, _per_key)
    device = [(s.born, k, s) for k, pool in _spares.items() if k[:2] == key[:2] for s in pool]
    device.sort(key=lambda item: (item[1] == key, item[0]))
    unwanted = [(k, s) for _, k, s in device[: max(0, len(device) - limit)]]
    for k, spare in unwanted:
        _spares[k].remove(spare)
        if not _spares[k]:
            del _spares[k]
    return [spare for _, spare in unwanted]


atexit.register(lambda: [s.discard() for pool in list(_spares.values()) for s in list(pool)])


def contained(exercise_id: str | None, private=(), also_shown=()) -> dict:
    """What the sandbox hides (the course's private folders, the data dir with the secret,
    the home directory) and the only files it shows again inside them: the exercise's spec,
    kernels/<id>.py (with any exercise it reuses: `reference("other")`), and `also_shown`. The
    submission itself is copied into the task folder (`run_in_child`), so the same mounts
    serve every submission of an exercise: a spare's. `exercise_id` None: every exercise's (a
    replayer serves them all)."""
    shown = []
    todo = [exercise_id] if exercise_id else [p.stem for p in sorted((ROOT / "kernels").glob("*.py"))]
    while todo:
        path = ROOT / "kernels" / f"{todo.pop()}.py"
        if path.is_file() and path not in shown:
            shown.append(path)
            todo += re.findall(r"""reference\(["'](\w+)["']\)""", path.read_text())
    hidden = [ROOT / "solutions", ROOT / "kernels", ROOT / "tests", data_dir(), *private]
    return {"hidden": [str(p) for p in hidden], "shown_files": [str(p) for p in [*shown, *also_shown]]}


_lifelines: dict = {}


def _lifeline() -> int:
    """The read end of a pipe whose write end only this process holds. Every child reads it and
    ends itself at end-of-file, when this process has gone, however it went: a child in a PID
    namespace cannot watch our pid, bwrap's --die-with-parent follows the thread that started
    it, and a killed grader runs no clean-up."""
    with _spares_lock:
        if os.getpid() not in _lifelines:  # one pipe per process (a forked copy makes its own)
            _lifelines[os.getpid()] = os.pipe()
        return _lifelines[os.getpid()][0]


def _spawn(
    task_dir: Path,
    work: Path,
    env: dict,
    cpu: int,
    backend: str,
    spare: bool = False,
    contain: dict | None = None,
    record_fd: int | None = None,
    where_fd: int | None = None,
    serve_fd: int | None = None,
    compiling: bool = False,
):
    """Start a child (a recording child with `record_fd`, the pipe it answers on; a replayer with
    `serve_fd`, a compiling child with `serve_fd` and `compiling`). No preexec_fn (the child limits itself, grader/containment/guard.py says why), so
    Popen forks and execs without running Python code in between, whatever other threads hold.
    With `contain` (from `contained`), the child runs inside bubblewrap (grader/containment/sandbox.py)."""
    lifeline = _lifeline()  # how every child, spare or not, knows that we are gone
    command = _child_command(task_dir, cpu, backend, spare, record_fd, where_fd, serve_fd, compiling)
    command += ["--lifeline", str(lifeline)]
    seccomp = cgroup = None
    if contain is not None:
        # a recording child answers through its pipe: its task folder is read-only, so all it can
        # write is the sandbox's capped tmpfs
        command, seccomp, cgroup = _sandboxed(command, task_dir, env, contain, task_writable=record_fd is None)
    try:
        proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=work,
            env=env,
            pass_fds=tuple(fd for fd in (seccomp, lifeline, record_fd, where_fd, serve_fd) if fd is not None),
        )
    except BaseException:
        if cgroup is not None:
            process_cap.remove_cgroup(cgroup)
        raise
    finally:
        if seccomp is not None:
            os.close(seccomp)
    proc.cgroup = cgroup
    # where the kernel caps nothing (root without a pids cgroup), _follow counts for it
    proc.watch = None if contain is None or process_cap.enforced(cgroup) else process_cap.NamespaceWatch(proc.pid)
    proc.output = CappedOutput(proc.stdout)
    if not spare and serve_fd is None:  # a replayer outlives the task that started it
        track(proc)
    return proc


def start_serving(prefix: str, backend: str, device, cpu: int, contain, compiling: bool = False, env=None) -> tuple:
    """(inbox folder, process, the pipe's write end, line-buffered) of a child kept for a run that
    serves tasks named on that pipe, each in a folder of its inbox: a replayer, or a compiling
    child with `compiling`. `env`: changes to its scrubbed environment. Started by the one
    long-lived spawning thread: bwrap's --die-with-parent ends a sandbox with the thread that
    started it, and the task's thread that asked for it ends with the task."""
    folder = scratch.TemporaryFolder(prefix=prefix)
    inbox = Path(folder.name)
    work = inbox / "work"
    work.mkdir()
    read, write = os.pipe()
    try:
        proc = (
            _spawner()
            .submit(
                _spawn,
                inbox,
                work,
                {**scrubbed_env(work, ROOT, backend, device), **(env or {})},
                cpu,
                backend,
                contain=contain,
                serve_fd=read,
                compiling=compiling,
            )
            .result()
        )
    except BaseException:
        os.close(write)
        folder.cleanup()
        raise
    finally:
        os.close(read)
    return folder, proc, os.fdopen(write, "w", buffering=1)


def stop_serving(proc, names, folder, grace: float = 0.0) -> None:
    """End a child `start_serving` started: its pipe closed (between tasks it then exits on its
    own, given `grace` seconds), then killed, its cgroup and inbox removed. Any may be None."""
    if names is not None:
        try:
            names.close()
        except OSError:
            pass
    if proc is not None:
        try:
            proc.wait(timeout=grace if names is not None else 0)
        except Exception:  # noqa: BLE001 - still running: killed below
            pass
        _kill(proc)
        _remove_cgroup(proc)
    if folder is not None:
        folder.cleanup()


def _child_command(
    task_dir: Path, cpu: int, backend: str, spare: bool, record_fd, where_fd, serve_fd, compiling: bool = False
) -> list:
    """`python -m grader.checking.child TASK_DIR` with the flags of what it is to be
    (grader/checking/child.py `_arguments`)."""
    command = [sys.executable, "-m", "grader.checking.child", str(task_dir), "--cpu", str(cpu)]
    if backend == "simulator":
        command += ["--address-space", str(SIMULATOR_ADDRESS_SPACE)]
    if spare:
        command += ["--spare", "1"]
    if record_fd is not None:
        command += ["--record", str(record_fd)] + (["--where", str(where_fd)] if where_fd is not None else [])
    if serve_fd is not None:  # a replayer (grader/checking/replayers.py): tasks' names come on serve_fd
        command += ["--serve", str(serve_fd)] + (["--compiling", "1"] if compiling else [])
    return command


def _sandboxed(command: list, task_dir: Path, env: dict, contain: dict, task_writable: bool) -> tuple:
    """(`command` inside bubblewrap, the seccomp filter's descriptor the child inherits, the
    pids cgroup it starts in or None where none can be made)."""
    command = [*command, "--processes", str(process_cap.PROCESS_CAP)]
    seccomp = sandbox.seccomp_fd()
    command = sandbox.command(command, task_dir, env, fd=seccomp, task_writable=task_writable, **contain)
    cgroup = process_cap.new_cgroup()
    if cgroup is not None:
        command = process_cap.enter_then_exec(command, cgroup)
    return command, seccomp, cgroup


def child_backend() -> str:
    """The engine a checking child runs: the one forced for children, else this process's."""
    return forced_backend() or current()


def _key(exercise_id: str, private, device, sandboxed: bool, backend: str | None = None) -> tuple:
    """Which spares can serve a check: back end (`backend`, else the children's), device,
    sandbox mounts."""
    mounts = (exercise_id, tuple(str(p) for p in private)) if sandboxed else None
    return (backend or child_backend(), device, mounts)


def start_ahead(exercise_id: str, private=(), device: int | None = None, sandboxed: bool = False):
    """Start this check's checking child now, so that it imports numba and the grader while the
    recording child records (grader/checking/recording.py): a Future of a spare for
    `run_in_child(..., ahead=...)`, or None when a kept-warm spare waits already. `discard_ahead`
    ends it when the check ends before it is used."""
    key = _key(exercise_id, private, device, sandboxed)
    with _spares_lock:
        if _spares.get(key):
            return None

    def start():
        spare = _Spare(*key)
        spare.key = key
        return spare

    return _spawner().submit(start)


def discard_ahead(ahead) -> None:
    if ahead is not None:
        ahead.result().discard()


def run_in_child(
    exercise_id: str,
    submission: Path,
    message,
    cases: list[PreparedCase],
    case_timeout: float,
    env: dict | None = None,
    time_seed: int | None = None,
    private=(),
    device: int | None = None,
    time_check=(0, 0),
    sandboxed: bool = False,
    progress=None,
    worth_timing=None,
    ahead=None,
    kernel_files: bool = False,
    bench_seed: int | None = None,
    backend: str | None = None,
) -> ChildRun:
    """Replay `message`'s plans (grader/replay/plan.py, checked by this process) on the cases'
    inputs. `submission` only names the file in messages: the child never reads it. Raises
    SubmissionError when a kernel cannot be rebuilt. `sandboxed`: in bubblewrap.
    `progress`: see `_follow`. `worth_timing(outcomes) -> bool`, with `time_seed`: whether the
    child may go on to time (every case passed); None: it always may. `ahead`: what
    `start_ahead` gave, used as this check's child (or discarded). `kernel_files`: the kernels
    keep the files they name (recorded in a notebook's own process), not `submission`'s.
    `bench_seed`: what the benchmark's base inputs are drawn from (default `time_seed`).
    `backend`: the engine the child runs (default: the children's; "simulator" on a GPU host
    runs the kernel doctor beside the GPU)."""
    key = _key(exercise_id, private, device, sandboxed, backend)
    pooled = env is None  # a caller's own environment: no spare serves it, none is started
    spare = _child_started_ahead(key, ahead, pooled)
    tmp = spare.tmp if spare else scratch.TemporaryFolder(prefix="zerogpu-")
    task_dir = Path(tmp.name)
    proc = spare.proc if spare else None
    cpu = int(STARTUP_SECONDS + case_timeout * (len(cases) + 1) * 2 + (SPEED_TIMEOUT if time_seed is not None else 0))
    fields = task_fields(
        exercise_id,
        submission,
        kernel_files=kernel_files,
        time_seed=time_seed,
        bench_seed=bench_seed,
        time_check=time_check,
        private=[] if sandboxed else private,  # none of them is in the sandbox's view
    )
    try:
        write_task(task_dir, {**fields, "cpu_seconds": cpu}, message, cases)
        spawned = time.monotonic()
        if proc is None:
            proc = _spawn_for_task(task_dir, key, env, cpu)
        if pooled:
            _refill_spare(key)
        pending = [c.index for c in cases]
        run = _follow(proc, task_dir, pending, case_timeout, time_seed, spawned, progress, worth_timing)
        if pooled and key[0] == "gpu" and _faulted(run):
            _replace_spare(key)
        return run
    except BaseException as exc:
        if pooled and not isinstance(exc, SubmissionError):  # a file that did not load taints no spare
            _replace_spare(key)
        raise
    finally:
        _end_child(proc, tmp)


def _child_started_ahead(key, ahead, pooled: bool):
    """A child already started for this check: a kept-warm spare, else what `start_ahead`
    began (discarded when a spare serves, when it was started for another key, or when the
    check is not `pooled`: run in an environment of the caller's)."""
    spare = _take_spare(key) if pooled else None
    if ahead is not None:
        early = ahead.result()
        if spare is None and pooled and early.key == key:
            spare = early
            track(spare.proc)
        else:
            early.discard()
    return spare


def _spawn_for_task(task_dir: Path, key: tuple, env: dict | None, cpu: int):
    """A checking child for the task in `task_dir`, started now, as a spare of `key` would be
    (`env`: the caller's environment, else the scrubbed one)."""
    backend, device, mounts = key
    work = task_dir / "work"
    work.mkdir(exist_ok=True)
    env = scrubbed_env(work, ROOT, backend, device) if env is None else env
    return _spawn(task_dir, work, env, cpu, backend, contain=contained(*mounts) if mounts else None)


def _end_child(proc, tmp) -> None:
    """Kill a child still running after its check, and remove its cgroup and task folder."""
    if proc is not None and proc.poll() is None:
        _kill(proc)
    _remove_cgroup(proc)
    tmp.cleanup()


def task_fields(exercise_id, hand_in, *, kernel_files, time_seed, bench_seed, time_check, private) -> dict:
    """task.json's fields for a checking child or a replayer (grader/checking/child.py `run_task`):
    what its cases need and nothing more. `hand_in` (grader/replay/sources.py): its name and the
    text every kernel is rebuilt from; no host path. Seeds only for a timed check (a GPU, where
    kernels run on the device, never as Python on the host): a CPU engine's child gets none.
    `private`: the folders the child's guard hides (none in the sandbox, which shows none)."""
    timed = time_seed is not None
    return {
        "exercise": exercise_id,
        "submission": hand_in.filename,
        "source": hand_in.text or None,
        "kernel_files": kernel_files,
        "time": timed,
        "seed": time_seed,
        "base_seed": bench_seed if timed else None,
        "check": list(time_check) if timed else [0, 0],
        "private": list(private),
    }


def write_task(task_dir: Path, task: dict, message, cases: list[PreparedCase]) -> None:
    """A checking child's task folder: the plans (checked, written anew by this process), each
    case's inputs, then task.json, last and whole: a waiting child starts on it as soon as it
    exists. `task` gets the cases."""
    (task_dir / "plans.json").write_text(message.to_json())
    task = {
        **task,
        "cases": [c.index for c in cases],
        "dims": {str(c.index): dict(c.case.dims) for c in cases},
    }
    for c in cases:
        np.savez(task_dir / f"inputs-{c.index}.npz", **c.inputs)
    (task_dir / "task.tmp").write_text(json.dumps(task))
    os.replace(task_dir / "task.tmp", task_dir / "task.json")


PROGRESS_SECONDS = 0.5
"""How often `progress` hears how long the case under way has taken."""


def _follow(
    proc,
    task_dir: Path,
    pending: list,
    case_timeout: float,
    time_seed,
    spawned: float,
    progress=None,
    worth_timing=None,
    served: bool = False,
) -> ChildRun:
    """Collect the child's outcomes as they appear; stop it when it makes no progress (asking
    it first where it is). `progress(case index, seconds into it)`, if given, hears about the
    case under way every PROGRESS_SECONDS, and (None, 0) when the GPU timing starts. `served`:
    `proc` is a replayer that serves other tasks after this one: it is done with this one when
    it leaves DONE in `task_dir` (a replayer stopped for a timeout or a crash is the caller's to
    replace)."""
    finished = _Finished(proc, task_dir, served)
    clock = _CaseClock(task_dir, spawned, case_timeout)
    outcomes: dict = {}
    stopped = _follow_cases(proc, task_dir, pending, outcomes, clock, finished, progress)
    if stopped is not None:
        return stopped
    samples = None
    if time_seed is not None:
        if not _tell_whether_to_time(task_dir, outcomes, worth_timing):
            finished.wait()  # it ends on its own
            return ChildRun(outcomes, startup_seconds=clock.startup)
        if progress is not None:
            progress(None, 0.0)
        if not _timing_finished(proc, finished):
            stopped = "timeout" if served else None  # a replayer that overran is replaced
            return ChildRun(outcomes, stopped, samples=f"timing did not finish within {SPEED_TIMEOUT:.0f} s")
        samples = _read_samples(task_dir) if (task_dir / "speed.json").exists() else finished.detail()
    finished.wait()  # every outcome is in: a child slow to exit costs nothing
    return ChildRun(outcomes, samples=samples, startup_seconds=clock.startup)


def _follow_cases(proc, task_dir: Path, pending: list, outcomes: dict, clock, finished, progress) -> ChildRun | None:
    """Read each case's outcome into `outcomes` as it appears; a ChildRun when the child stops
    before the last (crashed, or out of time); SubmissionError when the file did not load."""
    watch, looked, shown, gone = getattr(proc, "watch", None), 0.0, 0.0, False
    while pending:
        if watch is not None and time.monotonic() >= looked + WATCH_SECONDS:
            looked = time.monotonic()
            if watch.over_cap():
                _kill(proc)
                return ChildRun(outcomes, "crashed", TOO_MANY_PROCESSES)
        clock.look()
        if (task_dir / f"outcome-{pending[0]}.json").exists():
            index = pending.pop(0)
            outcomes[index] = _read_outcome(task_dir, index)
            clock.restart()
            continue
        if (task_dir / "load-error.json").exists():
            finished.wait()
            err = json.loads((task_dir / "load-error.json").read_text())
            raise SubmissionError(err["verdict"], err["message"], err["line"], err["source"])
        if gone:  # looked at every file once more since it went: nothing came
            return ChildRun(outcomes, "crashed", finished.detail())
        if finished.failed():
            # what it wrote just before it went may have landed after the looks above
            gone = True
            continue
        if time.monotonic() > clock.deadline:
            return clock.stop(proc, outcomes)
        if progress is not None and clock.ready and time.monotonic() >= shown + PROGRESS_SECONDS:
            shown = time.monotonic()
            progress(pending[0], clock.into_case(shown))
        time.sleep(0.02)
    return None


class _CaseClock:
    """The time limit of what a checking child is doing: starting (STARTUP_SECONDS), then
    rebuilding and compile-checking the kernels (grader code only: STARTUP_SECONDS, or the case
    limit if longer), then each case (`case_timeout` each), restarted by every sign of progress
    in its task folder: `imported`, `ready`, an outcome."""

    def __init__(self, task_dir: Path, spawned: float, case_timeout: float):
        self.task_dir, self.spawned, self.case_timeout = task_dir, spawned, case_timeout
        self.deadline = spawned + STARTUP_SECONDS
        self.imported = self.ready = False
        self.startup = None
        """Seconds from starting the child to its imports done."""

    def look(self) -> None:
        if not self.imported and (self.task_dir / "imported").exists():
            self.imported = True
            # until `ready`, the child runs grader code alone (kernels rebuilt and compile-
            # checked): the grader's allowance, never the learner's per-case limit
            self.deadline = time.monotonic() + max(self.case_timeout, STARTUP_SECONDS)
            self.startup = time.monotonic() - self.spawned
        if not self.ready and (self.task_dir / "ready").exists():
            self.ready = True
            self.restart()

    def restart(self) -> None:
        self.deadline = time.monotonic() + self.case_timeout

    def into_case(self, now: float) -> float:
        """Seconds the child has spent on the case under way."""
        return now - (self.deadline - self.case_timeout)

    def stop(self, proc, outcomes: dict) -> ChildRun:
        """Out of time: ask the child where it is (once it runs grader code), then kill it."""
        places = stuck.ask(self.task_dir, proc) if self.imported else []
        _kill(proc)
        limit = (
            self.case_timeout
            if self.ready
            else max(self.case_timeout, STARTUP_SECONDS)
            if self.imported
            else STARTUP_SECONDS
        )
        phase = "running" if self.ready else "loading" if self.imported else "starting"
        where = {"running": "running a case", "loading": "loading your file", "starting": "starting"}[phase]
        detail = f"no progress within {limit:.0f} s while {where}"
        return ChildRun(outcomes, "timeout", detail, limit=limit, where=places, phase=phase)


def _timing_finished(proc, finished) -> bool:
    """Wait up to SPEED_TIMEOUT for the child to finish timing; past it, kill it (False)."""
    deadline = time.monotonic() + SPEED_TIMEOUT
    while not finished.done():
        if time.monotonic() > deadline:
            _kill(proc)
            return False
        time.sleep(0.02)
    return True


class _Finished:
    """When a checking child is done with its task: a child of its own when it exits, a
    replayer when it leaves DONE (grader/checking/child.py `serve`)."""

    def __init__(self, proc, task_dir: Path, served: bool):
        self.proc, self.served = proc, served
        self.flag, self.error = task_dir / "done", task_dir / "served-error.json"

    def done(self) -> bool:
        return self.proc.poll() is not None or (self.served and self.flag.exists())

    def failed(self) -> bool:
        """Gone without finishing: the process died, or a replayer met an error of its own."""
        return self.proc.poll() is not None or (self.served and self.error.exists())

    def detail(self) -> str:
        if self.served and self.error.exists():
            try:
                said = json.loads(self.error.read_text()[:4000]).get("error", "")
            except (OSError, ValueError, AttributeError):
                said = ""
            return f"the grader's replayer failed on this task ({str(said)[:200]})"
        self.proc.output.wait(1.0)
        return _crash_detail(self.proc.returncode, self.proc.output.text()[-2000:])

    def wait(self) -> None:
        if not self.served:
            _wait_or_kill(self.proc, KILL_WAIT_SECONDS)
            return
        end = time.monotonic() + KILL_WAIT_SECONDS
        while not self.done() and time.monotonic() < end:
            time.sleep(0.005)
        if not self.done():
            _kill(self.proc)


def _tell_whether_to_time(task_dir: Path, outcomes: dict, worth_timing) -> bool:
    """Judge the outcomes (`worth_timing`) and leave the answer for the child (TIME_GO or
    TIME_SKIP); a judge that fails says skip, and the grading process meets the failure again
    when it judges the cases itself."""
    try:
        go = worth_timing is None or bool(worth_timing(outcomes))
    except Exception:  # noqa: BLE001 - see above
        go = False
    (task_dir / (TIME_GO if go else TIME_SKIP)).touch()
    return go


WATCH_SECONDS = 0.1
"""How often the processes of a sandbox that no kernel limit caps are counted."""
TOO_MANY_PROCESSES = (
    f"the process running your kernel started more than {process_cap.PROCESS_CAP} processes at once"
    " and was stopped: a kernel file never needs to start any"
)


def _wait_or_kill(proc: subprocess.Popen, seconds: float) -> None:
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        _kill(proc)


def _crash_detail(returncode: int, tail: str) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"the process running your kernel was killed by {name}"
    last = tail.strip().splitlines()[-1] if tail.strip() else ""
    return f"the process running your kernel exited with status {returncode} before finishing" + (
        f" (last output: {last[:200]})" if last else ""
    )

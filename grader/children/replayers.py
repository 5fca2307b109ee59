"""One replayer per GPU for a whole grading run (`replayers()`), instead of a checking child per check.

A check's checking child spends most of its time on work that is the same for every student:
starting Python and numba, compiling the exercise's baseline and target, drawing the benchmark's
inputs (docs/BENCHMARKS.md, "Class pace"). A replayer is a checking child that stays: it runs
one task after another (grader/children/roles/serve.py `serve`), each in a folder of its inbox, and
keeps what grader code made: the compiled reference kernels, the benchmark's inputs and the
buffers they are timed in (grader/gpu/arena.py `kept_arena`), so every submission of a run is
timed in the very buffers its baseline and target are. Recording stays a process of its own per
check (grader/children/recording.py), run by the class's workers on every core while the GPU's
replayer replays one check at a time; so does compiling: each check's kernels, and every
exercise's references at a replayer's start, are compiled ahead by compiling children
(grader/children/compiling.py), and the replayer loads them.

Only on a GPU: there a submission's kernels run on the device, and no code of the submission's
runs in the replayer's Python (its kernels are rebuilt from their `def`). On the CPU engines the
kernel doctor runs kernels as Python, so each check keeps a fresh child of its own. A replayer
that met a timeout, a crash or a GPU fault is stopped; the next check starts a new one.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from grader.children.compiling import Compiler, Compilers, compiled_ahead, default_arch, references_ahead
from grader.children.folder import ARCH, COMPILED, IMPORTED, REFERENCES, write_task
from grader.children.follow import ChildRun, follow
from grader.children.processes import on_cancel, task_cancelled
from grader.children.run import run_in_child
from grader.children.spares import faulted
from grader.children.spawn import child_backend, contained, start_serving, stop_serving
from grader.children.task import Hooks, ReplayTask
from grader.compiler.prebuilt import arch_of
from grader.containment import scratch
from grader.exercises import LADDER
from grader.paths import read_json, write_atomically
from grader.settings import REPLAYER_CPU_SECONDS


class Replayer:
    """A checking child serving one GPU (`device`), started on first use and again after it was
    stopped. One check at a time (`lock`); its tasks' folders live in its inbox. `backend`: "gpu"
    (a CPU engine only where tests drive the protocol itself)."""

    def __init__(self, device, sandboxed: bool, private: tuple, backend: str = "gpu"):
        self.device, self.sandboxed, self.private, self.backend = device, sandboxed, private, backend
        self.lock = threading.Lock()
        self.proc = None
        self._inbox = None
        self._names = None
        self._serving = None
        """The name of the task under way, for `abandon`."""
        self._state = threading.Lock()
        self._count = itertools.count()
        self._references = None
        """The compiling child preparing every exercise's references for this replayer."""

    def _start(self) -> None:
        contain = contained(None, self.private) if self.sandboxed else None
        self._inbox, self.proc, self._names = start_serving(
            "zerogpu-replayer-", self.backend, self.device, REPLAYER_CPU_SECONDS, contain
        )  # role "serve"
        inbox = Path(self._inbox.name)
        if self.backend == "gpu":  # the CPU engines compile nothing
            self._references = Compiler(self.sandboxed, self.private)
            threading.Thread(
                target=_prepare_references, args=(self._references, inbox), name="zerogpu-references", daemon=True
            ).start()

    def stop(self) -> None:
        """End the replayer now (a timeout, a crash, a GPU fault, or the run's end)."""
        with self._state:
            proc, names, inbox = self.proc, self._names, self._inbox
            self.proc = self._names = self._inbox = None
            references, self._references = self._references, None
        if references is not None:
            references.stop()
        stop_serving(proc, names, inbox, grace=2.0)

    def arch(self) -> tuple:
        """The target its device's kernels compile for, as the replayer said on starting; the
        default GPU's before then."""
        inbox = self._inbox
        return (inbox is not None and _arch_said(Path(inbox.name))) or default_arch()

    def abandon(self, name: str) -> None:
        """Stop the replayer if it is still on task `name` (that task was cancelled)."""
        with self._state:
            mine = self._serving == name
        if mine:
            self.stop()

    def run(self, task: ReplayTask, hooks: Hooks = Hooks(), compiled: dict | None = None) -> ChildRun:
        """`run_in_child`'s work, done by this replayer (the same task and result; `compiled`: its
        kernels compiled ahead, grader/children/compiling.py). A replayer that ended before the
        task's first outcome for a reason no submission can give (`_not_the_submissions`) is
        replaced and the task handed to the new one, once."""
        with self.lock:
            for attempt in range(2):
                run, again = self._run_once(task, hooks, compiled)
                if not again or attempt or task_cancelled():
                    return run

    def _run_once(self, task: ReplayTask, hooks: Hooks, compiled: dict | None) -> tuple:
        """(ChildRun, whether to hand the task to a new replayer): one hand-over of the task."""
        if self.proc is None or self.proc.poll() is not None:
            self.stop()
            self._start()
        name = f"task_{next(self._count)}"
        task_dir = Path(self._inbox.name) / name
        task_dir.mkdir()
        try:
            write_task(task_dir, task.fields(), task)
            if compiled:  # this check's kernels, compiled ahead
                try:
                    (task_dir / COMPILED).write_text(json.dumps(compiled))
                except OSError:  # a full disk: the replayer compiles them (a part it cannot parse is ignored)
                    pass
            with self._state:
                self._serving = name
            on_cancel(lambda: self.abandon(name))
            proc = self.proc
            try:
                self._names.write(name + "\n")
            except (OSError, ValueError, AttributeError):  # gone, or stopped by a cancel just now
                self.stop()
                return ChildRun({}, "crashed", "the grader's replayer had ended before this check"), True
            run = follow(proc, task_dir, task, time.monotonic(), hooks, served=True)
            again = _not_the_submissions(run, proc, task_dir)
            if faulted(run):  # stopped, or a GPU error that may have broken its CUDA context
                self.stop()
            return run, again
        except BaseException:
            self.stop()
            raise
        finally:
            with self._state:
                self._serving = None
            scratch.remove_tree(task_dir)


def _prepare_references(compiler: Compiler, inbox: Path, exercises=LADDER) -> None:
    """Every exercise's references compiled ahead, in ladder order (the order class grading hands
    checks out in), each left in the replayer's inbox as REFERENCES for it to load before it
    warms them up (grader/replay/references.py). Ends with the replayer (its inbox gone)."""
    deadline = time.monotonic() + REFERENCES_TIMEOUT
    arch = _arch_said(inbox)
    while arch is None and time.monotonic() < deadline and inbox.exists():
        time.sleep(0.05)  # the replayer says its device's target once it has a context
        arch = _arch_said(inbox)
    try:
        for exercise_id in exercises if arch is not None else ():
            entries = references_ahead(compiler, exercise_id, arch, REFERENCES_TIMEOUT)
            if entries is None or not inbox.exists():
                return
            write_atomically(inbox / REFERENCES.format(exercise_id), json.dumps(entries))
    except Exception:  # noqa: BLE001 - its inbox gone, no child started: the replayer compiles
        return


def _arch_said(inbox: Path) -> tuple | None:
    """The target a replayer said its device's kernels compile for (ARCH in its inbox), or None."""
    said = read_json(inbox / ARCH, 64)
    try:
        return arch_of(said) if said is not None else None
    except (TypeError, ValueError):
        return None


REFERENCES_TIMEOUT = 120.0
"""The longest one exercise's references may take to compile ahead (matmul_tiled's: 10 s on the
project's 2-core CPU machine)."""


def _not_the_submissions(run: ChildRun, proc, task_dir: Path) -> bool:
    """Did the replayer end before the task's first outcome in a way no submission can cause:
    before it began the task, or with exit status 0 (a replayer exits 0 only when its names end
    or the grader has gone; a submission's kernels run on the device, where a fault is an error
    the replayer reports, not an exit)?"""
    if run.stopped != "crashed" or run.outcomes:
        return False
    return not (task_dir / IMPORTED).exists() or proc.poll() == 0


_serving: dict = {}
"""(device, sandboxed, private) -> its Replayer, inside `replayers()`."""
_serving_lock = threading.Lock()
_active = 0
_compilers = Compilers()
"""The compiling children of the run inside `replayers()`."""


@contextmanager
def replayers():
    """While inside, graded checks on a GPU are replayed by one replayer per GPU (and sandbox
    view) instead of a child each: what `zerogpu grade` does on a GPU host. Each is stopped on leaving."""
    global _active
    with _serving_lock:
        _active += 1
    try:
        yield
    finally:
        with _serving_lock:
            _active -= 1
            leftovers = list(_serving.values()) if not _active else []
            if not _active:
                _serving.clear()
        for replayer in leftovers:
            replayer.stop()
        if leftovers:
            _compilers.stop()


def replayer_for(device, sandboxed: bool, private) -> Replayer | None:
    """The replayer serving `device` inside `replayers()` on a GPU host, else None."""
    if not _active or child_backend() != "gpu":
        return None
    key = (device, sandboxed, tuple(str(p) for p in private))
    with _serving_lock:
        if key not in _serving:
            _serving[key] = Replayer(*key)
        return _serving[key]


def runner(device, sandboxed: bool, private):
    """What runs a check's replay: its device's replayer inside `replayers()`, else a child of
    its own (`run_in_child`); both take a ReplayTask and Hooks (grader/children/task.py `Runner`)."""
    replayer = replayer_for(device, sandboxed, private)
    if replayer is None:
        return run_in_child

    def run(task: ReplayTask, hooks: Hooks = Hooks()) -> ChildRun:
        if hooks.ahead is not None:
            hooks.ahead.result().discard()
        compiled = compiled_ahead(_compilers, task, replayer.arch())
        return replayer.run(task, Hooks(hooks.progress, hooks.worth_timing), compiled)

    return run

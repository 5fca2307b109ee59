"""A task replayed in a child of its own: `run_in_child`, the runner where no GPU replayer
serves (a CPU engine, a learner's check, the doctor beside a GPU)."""

from __future__ import annotations

import time
from pathlib import Path

from grader.children.folder import write_task
from grader.children.follow import ChildRun, follow
from grader.children.processes import end_child, track
from grader.children.spares import SPARES, faulted, key_of
from grader.children.spawn import contained, spawn
from grader.children.task import Hooks, ReplayTask
from grader.containment import scratch
from grader.containment.guard import scrubbed_env
from grader.exercises import ROOT
from grader.steps.load import SubmissionError


def run_in_child(task: ReplayTask, hooks: Hooks = Hooks(), env: dict | None = None) -> ChildRun:
    """Replay `task` in a child: a kept-warm spare, what `hooks.ahead` started, or one started
    now. Raises SubmissionError when a kernel cannot be rebuilt. `env`: the caller's own
    environment for the child (no spare serves it, none is started)."""
    key = key_of(task.exercise.id, task.private, task.device, task.sandboxed, task.backend)
    pooled = env is None
    spare = _started_ahead(key, hooks.ahead, pooled)
    tmp = spare.tmp if spare else scratch.TemporaryFolder(prefix="zerogpu-")
    folder = Path(tmp.name)
    proc = spare.proc if spare else None
    try:
        write_task(folder, task.fields(), task)
        spawned = time.monotonic()
        if proc is None:
            proc = _spawn_for(folder, key, env, task.cpu_seconds())
        if pooled:
            SPARES.refill(key)
        run = follow(proc, folder, task, spawned, hooks)
        if pooled and key[0] == "gpu" and faulted(run):
            SPARES.replace(key)
        return run
    except BaseException as exc:
        if pooled and not isinstance(exc, SubmissionError):  # a file that did not load taints no spare
            SPARES.replace(key)
        raise
    finally:
        end_child(proc, tmp)


def _started_ahead(key, ahead, pooled: bool):
    """A child already started for this check: a kept-warm spare, else what `start_ahead`
    began (discarded when a spare serves, when it was started for another key, or when the
    check is not `pooled`: run in an environment of the caller's)."""
    spare = SPARES.take(key) if pooled else None
    if ahead is not None:
        early = ahead.result()
        if spare is None and pooled and early.key == key:
            spare = early
            track(spare.proc)
        else:
            early.discard()
    return spare


def _spawn_for(folder: Path, key: tuple, env: dict | None, cpu: int):
    """A checking child for the task in `folder`, started now, as a spare of `key` would be
    (`env`: the caller's environment, else the scrubbed one)."""
    backend, device, mounts = key
    work = folder / "work"
    work.mkdir(exist_ok=True)
    env = scrubbed_env(work, ROOT, backend, device) if env is None else env
    return spawn(folder, env, cpu, backend, contain=contained(*mounts) if mounts else None)

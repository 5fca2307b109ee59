"""The one object that crosses from a check to the child that replays it: `ReplayTask`.

A check (grader/checking/check.py) makes one frozen `ReplayTask` of what its child needs: the exercise,
the hand-in's name and text, the checked message, the cases, the limits, the seeds of a timed
check, the device and the sandbox. A runner (`Runner`) replays it: a child of its own
(grader/children/run.py `run_in_child`) or the GPU's replayer (grader/children/replayers.py),
which take the same arguments and give the same `ChildRun`. What goes into task.json is
`ReplayTask.fields`: no other field of the grading process's, no host path, and no seed unless timed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

from grader.settings import SPEED_TIMEOUT, STARTUP_SECONDS


@dataclass(frozen=True)
class Timing:
    """A timed check's seeds (a GPU's): what its inputs vary from, what the benchmark's base
    inputs are drawn from, and which timed launch (round, set, pick seed) is checked."""

    seed: int
    bench_seed: int
    check: tuple = (0, 0)


@dataclass(frozen=True)
class ReplayTask:
    """One replay: the task a child or a replayer runs, all of it frozen here."""

    exercise: object
    """The exercise (grader/exercises.py `Exercise`); its id goes down."""
    hand_in: object
    """grader/replay/sources.py `HandIn`: the name messages give the file and the text the
    kernels are rebuilt from."""
    message: object
    """The checked message (grader/replay/plan.py `Message`): its plans and kernels."""
    cases: tuple
    """The prepared cases (grader/steps/cases.py `PreparedCase`) to replay, in order."""
    case_timeout: float
    timing: Timing | None = None
    """Set for a timed check (a GPU); None elsewhere: the child then gets no seed at all."""
    device: int | None = None
    sandboxed: bool = False
    private: tuple = ()
    """Folders no submission may read (the guard's, outside the sandbox, which shows none)."""
    kernel_files: bool = False
    """The kernels keep the files they name (recorded in a notebook's own process)."""
    backend: str | None = None
    """The engine the child runs; None: the children's (grader/children/spawn.py `child_backend`).
    "simulator" on a GPU host: the kernel doctor beside the GPU (grader/checking/beside.py)."""

    def cpu_seconds(self) -> int:
        """The child's CPU allowance: every case's time twice over, the start, the timing."""
        timed = SPEED_TIMEOUT if self.timing is not None else 0
        return int(STARTUP_SECONDS + self.case_timeout * (len(self.cases) + 1) * 2 + timed)

    def fields(self) -> dict:
        """task.json: what the child's cases need and nothing more (grader/children/roles/replay.py)."""
        timed = self.timing is not None
        return {
            "exercise": self.exercise.id,
            "submission": self.hand_in.filename,
            "source": self.hand_in.text or None,
            "kernel_files": self.kernel_files,
            "time": timed,
            "seed": self.timing.seed if timed else None,
            "base_seed": self.timing.bench_seed if timed else None,
            "check": list(self.timing.check) if timed else [0, 0],
            "private": [] if self.sandboxed else [str(p) for p in self.private],
            "cases": [c.index for c in self.cases],
            "dims": {str(c.index): dict(c.case.dims) for c in self.cases},
            "cpu_seconds": self.cpu_seconds(),
        }


@dataclass(frozen=True)
class Hooks:
    """What the grading process hears and decides while a child runs (never sent to it)."""

    progress: Callable | None = None
    """`progress(case index, seconds into it)` every half second; (None, 0) as timing starts."""
    worth_timing: Callable | None = None
    """`worth_timing(outcomes) -> bool`: may a timed child go on to time (every case passed)?"""
    ahead: object = None
    """A child `start_ahead` began for this check (grader/children/spares.py), or None."""


class Runner(Protocol):
    """What replays a task: `run_in_child`, or a GPU's replayer's `run`."""

    def __call__(self, task: ReplayTask, hooks: Hooks = Hooks()):  # -> grader/children/follow.py ChildRun
        ...

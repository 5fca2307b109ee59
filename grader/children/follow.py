"""Following a child: its outcomes as they come, its time limits, and why it stopped.

The grading process reads each case's outcome as the child leaves it, restarts the case's clock
at every sign of progress, asks a late child where its code is (grader/children/stuck.py) before
it kills it, and on a GPU tells a child whether to time (every case judged first). A child that
dies is `crashed`; one past its limit, `timeout`, with where it was.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader.children import stuck
from grader.children.folder import DONE, IMPORTED, LOAD_ERROR, OUTCOME_JSON, READY, SERVED_ERROR, SPEED, TIME_GO
from grader.children.folder import TIME_SKIP, read_outcome, read_samples
from grader.children.processes import crash_detail, kill, wait_or_kill
from grader.children.task import Hooks, ReplayTask
from grader.containment import process_cap
from grader.settings import KILL_WAIT_SECONDS, SPEED_TIMEOUT, STARTUP_SECONDS
from grader.steps.load import SubmissionError

PROGRESS_SECONDS = 0.5
"""How often `Hooks.progress` hears how long the case under way has taken."""
WATCH_SECONDS = 0.1
"""How often the processes of a sandbox that no kernel limit caps are counted."""
TOO_MANY_PROCESSES = (
    f"the process running your kernel started more than {process_cap.PROCESS_CAP} processes at once"
    " and was stopped: a kernel file never needs to start any"
)


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
    """Where the child's code was when the time limit ran out (grader/children/stuck.py), as
    it said: places in the submission, GPU threads first; empty when it did not say."""
    phase: str = ""
    """What the time limit stopped: "starting" (Python and the grader), "loading" (the
    kernels rebuilt and checked) or "running" (a case)."""


def follow(
    proc, folder: Path, task: ReplayTask, spawned: float, hooks: Hooks = Hooks(), served: bool = False
) -> ChildRun:
    """Collect the child's outcomes as they appear; stop it when it makes no progress (asking it
    first where it is). `served`: `proc` is a replayer that serves other tasks after this one:
    it is done with this one when it leaves DONE in `folder` (a replayer stopped for a timeout or
    a crash is the caller's to replace)."""
    finished = Finished(proc, folder, served)
    clock = CaseClock(folder, spawned, task.case_timeout)
    outcomes: dict = {}
    stopped = follow_cases(proc, folder, [c.index for c in task.cases], outcomes, clock, finished, hooks.progress)
    if stopped is not None:
        return stopped
    samples = None
    if task.timing is not None:
        if not tell_whether_to_time(folder, outcomes, hooks.worth_timing):
            finished.wait()  # it ends on its own
            return ChildRun(outcomes, startup_seconds=clock.startup)
        if hooks.progress is not None:
            hooks.progress(None, 0.0)
        if not timing_finished(proc, finished):
            stopped = "timeout" if served else None  # a replayer that overran is replaced
            return ChildRun(outcomes, stopped, samples=f"timing did not finish within {SPEED_TIMEOUT:.0f} s")
        samples = read_samples(folder) if (folder / SPEED).exists() else finished.detail()
    finished.wait()  # every outcome is in: a child slow to exit costs nothing
    return ChildRun(outcomes, samples=samples, startup_seconds=clock.startup)


def follow_cases(proc, folder: Path, pending: list, outcomes: dict, clock, finished, progress) -> ChildRun | None:
    """Read each case's outcome into `outcomes` as it appears; a ChildRun when the child stops
    before the last (crashed, or out of time); SubmissionError when a kernel was not rebuilt."""
    watch, looked, shown, gone = getattr(proc, "watch", None), 0.0, 0.0, False
    while pending:
        if watch is not None and time.monotonic() >= looked + WATCH_SECONDS:
            looked = time.monotonic()
            if watch.over_cap():
                kill(proc)
                return ChildRun(outcomes, "crashed", TOO_MANY_PROCESSES)
        clock.look()
        if (folder / OUTCOME_JSON.format(pending[0])).exists():
            index = pending.pop(0)
            outcomes[index] = read_outcome(folder, index)
            clock.restart()
            continue
        if (folder / LOAD_ERROR).exists():
            finished.wait()
            err = json.loads((folder / LOAD_ERROR).read_text())
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


class CaseClock:
    """The time limit of what a checking child is doing: starting (STARTUP_SECONDS), then
    rebuilding and compile-checking the kernels (grader code only: STARTUP_SECONDS, or the case
    limit if longer), then each case (`case_timeout` each), restarted by every sign of progress
    in its task folder: `imported`, `ready`, an outcome."""

    def __init__(self, folder: Path, spawned: float, case_timeout: float):
        self.folder, self.spawned, self.case_timeout = folder, spawned, case_timeout
        self.deadline = spawned + STARTUP_SECONDS
        self.imported = self.ready = False
        self.startup = None
        """Seconds from starting the child to its imports done."""

    def look(self) -> None:
        if not self.imported and (self.folder / IMPORTED).exists():
            self.imported = True
            # until `ready`, the child runs grader code alone (kernels rebuilt and compile-
            # checked): the grader's allowance, never the learner's per-case limit
            self.deadline = time.monotonic() + max(self.case_timeout, STARTUP_SECONDS)
            self.startup = time.monotonic() - self.spawned
        if not self.ready and (self.folder / READY).exists():
            self.ready = True
            self.restart()

    def restart(self) -> None:
        self.deadline = time.monotonic() + self.case_timeout

    def into_case(self, now: float) -> float:
        """Seconds the child has spent on the case under way."""
        return now - (self.deadline - self.case_timeout)

    def limit(self) -> float:
        if self.ready:
            return self.case_timeout
        return max(self.case_timeout, STARTUP_SECONDS) if self.imported else STARTUP_SECONDS

    def stop(self, proc, outcomes: dict) -> ChildRun:
        """Out of time: ask the child where it is (once it runs grader code), then kill it."""
        places = stuck.ask(self.folder, proc) if self.imported else []
        kill(proc)
        limit = self.limit()
        phase = "running" if self.ready else "loading" if self.imported else "starting"
        where = {"running": "running a case", "loading": "loading your file", "starting": "starting"}[phase]
        detail = f"no progress within {limit:.0f} s while {where}"
        return ChildRun(outcomes, "timeout", detail, limit=limit, where=places, phase=phase)


def timing_finished(proc, finished) -> bool:
    """Wait up to SPEED_TIMEOUT for the child to finish timing; past it, kill it (False)."""
    deadline = time.monotonic() + SPEED_TIMEOUT
    while not finished.done():
        if time.monotonic() > deadline:
            kill(proc)
            return False
        time.sleep(0.02)
    return True


class Finished:
    """When a checking child is done with its task: a child of its own when it exits, a
    replayer when it leaves DONE (grader/children/roles/serve.py)."""

    def __init__(self, proc, folder: Path, served: bool):
        self.proc, self.served = proc, served
        self.flag, self.error = folder / DONE, folder / SERVED_ERROR

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
        return crash_detail(self.proc.returncode, self.proc.output.text()[-2000:])

    def wait(self) -> None:
        if not self.served:
            wait_or_kill(self.proc, KILL_WAIT_SECONDS)
            return
        end = time.monotonic() + KILL_WAIT_SECONDS
        while not self.done() and time.monotonic() < end:
            time.sleep(0.005)
        if not self.done():
            kill(self.proc)


def tell_whether_to_time(folder: Path, outcomes: dict, worth_timing) -> bool:
    """Judge the outcomes (`worth_timing`) and leave the answer for the child (TIME_GO or
    TIME_SKIP); a judge that fails says skip, and the grading process meets the failure again
    when it judges the cases itself."""
    try:
        go = worth_timing is None or bool(worth_timing(outcomes))
    except Exception:  # noqa: BLE001 - see above
        go = False
    (folder / (TIME_GO if go else TIME_SKIP)).touch()
    return go

"""Ending a child, and every child one grading task started.

`kill` ends a child's whole session (a sandbox's every process with it); `TaskProcesses` holds
what one task of a class run started, so that the coordinating thread can end the task from
outside when it misses its deadline (grader/classroom/grading.py), whatever its worker waits on.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from contextlib import contextmanager

from grader.containment import process_cap
from grader.settings import KILL_WAIT_SECONDS


def kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=KILL_WAIT_SECONDS)
    except subprocess.TimeoutExpired:
        threading.Thread(target=proc.wait, name="zerogpu-reaper", daemon=True).start()


def wait_or_kill(proc: subprocess.Popen, seconds: float) -> None:
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        kill(proc)


def remove_cgroup(proc) -> None:
    if getattr(proc, "cgroup", None) is not None:
        process_cap.remove_cgroup(proc.cgroup)


def end_child(proc, folder) -> None:
    """Kill a child still running after its task, and remove its cgroup and task folder."""
    if proc is not None and proc.poll() is None:
        kill(proc)
    remove_cgroup(proc)
    folder.cleanup()


def crash_detail(returncode: int, tail: str) -> str:
    """A child that died, in a learner's words: the signal, or its status and last output."""
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
        not own (a replayer, grader/children/replayers.py)."""
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
            kill(proc)

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            procs, stops = list(self._procs), list(self._on_cancel)
        for proc in procs:
            kill(proc)
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

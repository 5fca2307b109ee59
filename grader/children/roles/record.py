"""The `record` role: load the submission, call its `launch` on placeholders once per plan the
task asks for (grader/replay/record.py), and write the one message (grader/replay/plan.py) to
a pipe only the grading process reads. It holds no input, no secret, no GPU context; it
decides nothing. A recording child started ahead (`--ahead`) imports numba and the recorder,
then waits for its task."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from grader.children.folder import TASK
from grader.children.roles.common import install_guard, lower_cpu_limit, private, wait_for
from grader.children.stuck import snapshot
from grader.exercises import exercise
from grader.replay.plan import Failure, Message
from grader.steps.load import SubmissionError, load_launch


def record_task(folder: Path, fd: int, where: int | None = None, ahead: bool = False) -> None:
    """Record the task in `folder`, the message written to `fd`; `where`: the lookout's pipe."""
    if ahead:
        import numba.cuda.simulator.kernel  # noqa: F401 - numba's CUDA API (this child's back end), which `recording` patches
        import grader.replay.record  # noqa: F401

        wait_for(folder / TASK)
    task = json.loads((folder / TASK).read_text())
    if task.get("cpu_seconds"):  # a child started ahead had a generous allowance until now
        lower_cpu_limit(task["cpu_seconds"])
    from grader.replay.record import Recorder, recording

    ex = exercise(task["exercise"])
    path = task["submission"]
    source = Path(path).read_bytes()  # decoded by load_launch: a byte that is not text is a verdict
    recorder = Recorder()
    install_guard(private(folder, task), folder)
    recorder.filename = path
    phase = ["loading"]
    if where is not None:
        _report_where(where, path, phase)
    with recording(recorder, task.get("device")):  # before the file loads: names it imports are ours
        message = _record(ex, source, path, task["plans"], recorder, phase)
    data = message.to_json().encode()
    with os.fdopen(fd, "wb", closefd=True) as pipe:
        pipe.write(data)


def _record(ex, source: bytes, path: str, wanted: dict, recorder, phase: list):
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
    reads the last line only when time has run out (grader/children/recording.py); it never
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

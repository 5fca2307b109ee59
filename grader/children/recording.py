"""The grading process's side of recording: start the recording child, read its one message
from a pipe this process owns, check it (grader/replay/plan.py).

The child (`python -m grader.children TASK_DIR --role record --record-fd FD`,
grader/children/roles/record.py `record_task`) gets the submission, the exercise and, per plan wanted, the sizes and scalars of
a case: never an input array, never the secret. It runs with the simulator's API (no GPU
context) in the same sandbox as a checking child when graded. Whatever it sends is data: a
malformed, oversized or missing message is a failing verdict for this submission, and a child
that hangs is killed at the deadline.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import threading
import time
from pathlib import Path

from grader.children.processes import crash_detail, end_child, kill, track
from grader.children.spawn import Role, contained, spawn
from grader.children.stuck import MOST_PLACES, _place
from grader.containment import sandbox, scratch
from grader.containment.guard import scrubbed_env
from grader.exercises import ROOT, Exercise
from grader.replay.plan import MAX_MESSAGE_BYTES, Message
from grader.replay.schema import NotTheHandIns, PlanError, read_message
from grader.replay.sources import HandIn
from grader.settings import EXIT_GRACE, SPARE_CPU_SECONDS, STARTUP_SECONDS
from grader.steps.load import SubmissionError


class RecordingStopped(Exception):
    """The recording child did not answer: `verdict` is "timeout" or "crashed". `places` and
    `phase`: where the submission was when time ran out, as its lookout last said (checked place
    by place, grader/children/stuck.py), and whether the file was still loading."""

    def __init__(self, verdict: str, detail: str, places=(), phase: str = "running", limit: float = 0.0):
        super().__init__(detail)
        self.verdict, self.detail, self.places, self.phase, self.limit = verdict, detail, list(places), phase, limit


def record_in_child(
    ex: Exercise,
    hand_in: HandIn,
    wanted: dict,
    seconds: float,
    private=(),
    sandboxed: bool = False,
    device: dict | None = None,
) -> Message:
    """The checked message for `wanted` (plan key -> {"dims", "scalars"}) of exercise `ex`, its kernels' texts
    taken from `hand_in` (the bytes the grader read, which the child gets a copy of). Raises
    SubmissionError when the file cannot be loaded or the message is not a plan,
    RecordingStopped when the child hangs or dies."""
    cpu = int(STARTUP_SECONDS + seconds * 2)

    def write(task_dir: Path) -> None:
        _write_task(task_dir, ex.id, hand_in, wanted, private, sandboxed, device, cpu)

    waiting = None if sandboxed else _take_waiting()
    child = waiting or _new_child(cpu, contained(ex.id, private) if sandboxed else None, write)
    tmp, task_dir, proc, read_end, where_read = child
    try:
        if waiting is not None:  # started ahead: it starts on its task.json
            write(task_dir)
        data = _read_message(read_end, proc, time.monotonic() + STARTUP_SECONDS + seconds, where_read, seconds)
    finally:
        os.close(read_end)
        os.close(where_read)
        end_child(proc, tmp)
    return _checked(data, ex.spec, hand_in)


_waiting: list = []
"""A recording child started ahead (`record_ahead`), at most one: (folder, its task folder, the
process, the read ends of its message pipe and of its lookout's)."""
_waiting_lock = threading.Lock()


def record_ahead() -> None:
    """Start a recording child for the next unsandboxed check now, unless one waits: Python,
    numba and the recorder imported while the learner reads a result (grader/__init__.py calls
    this after each notebook check). It waits for its task.json, then records as one started
    for the task does, within that task's CPU allowance."""
    with _waiting_lock:
        if not _waiting:
            _waiting.append(_new_child(SPARE_CPU_SECONDS))


def _new_child(cpu: int, contain: dict | None = None, write=None) -> tuple:
    """(folder, task folder, process, read ends of its message and lookout pipes) of a recording
    child started now: for its task (`write(task folder)` first writes task.json), or ahead,
    waiting for one (`write` None)."""
    tmp = scratch.TemporaryFolder(prefix="zerogpu-record-")
    task_dir = Path(tmp.name)
    work = task_dir / "work"
    work.mkdir()
    read_end, write_end = os.pipe()
    where_read, where_write = os.pipe()
    os.set_blocking(where_read, False)
    try:
        if write is not None:
            write(task_dir)
        env = scrubbed_env(work, ROOT, "simulator")
        role = Role("record", record=write_end, where=where_write, ahead=write is None)
        proc = spawn(task_dir, env, cpu, "simulator", role, contain)
    except BaseException:
        os.close(read_end)
        os.close(where_read)
        tmp.cleanup()
        raise
    finally:
        os.close(write_end)
        os.close(where_write)
    return tmp, task_dir, proc, read_end, where_read


def _take_waiting():
    """The recording child started ahead, if one waits alive; else None."""
    with _waiting_lock:
        waiting = _waiting.pop() if _waiting else None
    if waiting is not None and waiting[2].poll() is not None:  # died waiting: not usable
        _discard(waiting)
        return None
    if waiting is not None:
        track(waiting[2])
    return waiting


def _discard(waiting) -> None:
    tmp, _, proc, read_end, where_read = waiting
    os.close(read_end)
    os.close(where_read)
    end_child(proc, tmp)


atexit.register(lambda: [_discard(w) for w in list(_waiting)])


def _write_task(
    task_dir: Path, exercise_id: str, hand_in: HandIn, wanted: dict, private, sandboxed: bool, device, cpu: int
) -> None:
    """The recording child's task.json, written whole (a child started ahead starts on it), and
    the hand-in's bytes as the grader read them, in the task folder (the sandbox shows no folder
    of the course's; and the child records the text the grader reads)."""
    (task_dir / "submission").mkdir()
    copy = task_dir / "submission" / _file_name(hand_in.filename)
    copy.write_bytes(hand_in.data)
    task = {
        "exercise": exercise_id,
        "submission": f"{sandbox.TASK}/submission/{copy.name}" if sandboxed else str(copy),
        "plans": wanted,
        "device": device,
        "private": [] if sandboxed else list(private),  # none of them is in the sandbox's view
        "cpu_seconds": cpu,
    }
    (task_dir / "task.tmp").write_text(json.dumps(task))
    os.replace(task_dir / "task.tmp", task_dir / "task.json")


def _file_name(name: str) -> str:
    """A file name for the child's copy: the hand-in's own, or one that is safe to make."""
    name = Path(name).name
    return name if name.endswith(".py") and name.isprintable() and "/" not in name else "submission.py"


def _checked(data: bytes, spec, hand_in: HandIn) -> Message:
    """The child's message, checked (grader/replay/schema.py) against the exercise's `spec`, its
    kernels' texts the hand-in's; SubmissionError when it is not a plan, or when it says the
    file did not load."""
    try:
        message = read_message(
            data, outputs=[a.name for a in spec.outputs], hand_in=hand_in, host_data=spec.answer_from_inputs
        )
    except NotTheHandIns as why:
        raise SubmissionError("exception", f"{str(why)[:1].upper()}{str(why)[1:]}.") from None
    except PlanError as why:
        raise SubmissionError("exception", f"The grader could not read what your `launch` did: {why}.") from None
    if message.load_failure is not None:
        f = message.load_failure
        raise SubmissionError(f.verdict, f.message, f.line, f.source)
    return message


class _Lookout:
    """What the recording child's lookout says on its pipe, drained as it comes (so that the
    child never waits on a full pipe and the last line is the latest): only the last 64 KiB kept."""

    def __init__(self, fd: int):
        self.fd, self.data = fd, b""

    def drain(self) -> None:
        try:
            while chunk := os.read(self.fd, 1 << 16):
                self.data = (self.data + chunk)[-(1 << 16) :]
        except (BlockingIOError, OSError):
            pass

    def last_said(self) -> tuple:
        """(phase, places) of the last whole line, each place checked (grader/children/stuck.py);
        ("running", []) when it said nothing readable."""
        self.drain()
        lines = self.data.split(b"\n")[:-1]
        try:
            said = json.loads(lines[-1]) if lines else {}
        except ValueError:
            said = {}
        said = said if isinstance(said, dict) else {}
        found = said.get("places") if isinstance(said.get("places"), list) else []
        places = [p for p in (_place(p) for p in found) if p]
        return ("loading" if said.get("phase") == "loading" else "running"), places[:MOST_PLACES]


def _read_message(fd: int, proc, deadline: float, where: int, limit: float) -> bytes:
    """Everything the child writes to the pipe until it closes it, at most MAX_MESSAGE_BYTES,
    before `deadline`."""
    chunks, size = [], 0
    lookout = _Lookout(where)
    gone_since = None
    heard = False
    while True:
        lookout.drain()
        if lookout.data and not heard:
            # The lookout's first line: Python and the grader's imports are done, so the file and
            # its `launch` get `limit` from here (as a checking child's cases do), not what is left
            # of the start-up allowance. It can only bring the deadline closer.
            heard = True
            deadline = min(deadline, time.monotonic() + limit)
        left = deadline - time.monotonic()
        if left <= 0:
            phase, places = lookout.last_said()
            kill(proc)
            raise RecordingStopped(
                "timeout",
                "your file and `launch` did not finish in time while the grader recorded them",
                places,
                phase,
                limit,
            )
        ready, _, _ = select.select([fd], [], [], min(left, 0.5))
        if not ready:
            # An exit seen here may have followed a whole message written since the select (this
            # thread can wait long for the GIL): only a pipe still silent EXIT_GRACE after the
            # exit means no answer (a process the child left behind still holds it open)
            if proc.poll() is not None and not chunks:
                gone_since = gone_since or time.monotonic()
                if time.monotonic() - gone_since > EXIT_GRACE:
                    break
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        size += len(chunk)
        if size > MAX_MESSAGE_BYTES:
            kill(proc)
            raise SubmissionError(
                "exception", f"What your `launch` did is larger than {MAX_MESSAGE_BYTES >> 20} MiB to describe."
            )
        chunks.append(chunk)
    try:
        proc.wait(timeout=max(deadline - time.monotonic(), 1.0))
    except Exception:  # noqa: BLE001 - a child that lingers after answering is killed
        kill(proc)
    if not chunks:
        proc.output.wait(1.0)
        raise RecordingStopped("crashed", crash_detail(proc.returncode or 0, proc.output.text()[-2000:]))
    return b"".join(chunks)

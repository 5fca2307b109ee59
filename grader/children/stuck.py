"""Where a check that ran out of time was, and how to say it to the learner.

When a case has used up its time, the parent (grader/children/follow.py) leaves `where-asked`
in the task folder and gives the child a moment before it kills it. The child's lookout thread
(`Lookout`, started before the submission loads) polls for that file and answers in
`where.json`: the line of the learner's file each of its threads was on (`sys._current_frames()`),
with the GPU thread (threadIdx, blockIdx) the kernel doctor or Numba's simulator was running
there. A file rather than a signal: in graded mode the child is in its own PID namespace behind
bubblewrap, and the task folder is already what both sides share. The lookout writes through
`Guard.writing()`, which lets only its own thread write (grader/containment/guard.py).

`timeout_case` is the parent's side: "your kernel was still running at line 12 (thread 3 of
block 0) when the time limit of 10 s ran out", with a hint about the loop around that line.
What comes back from the child is read as untrusted data: anything malformed is ignored.
"""

from __future__ import annotations

import ast
import json
import os
import sys
import threading
import time
from pathlib import Path

from grader.settings import ANSWER_SECONDS
from grader import pysource

ASKED, ANSWER = "where-asked", "where.json"
POLL_SECONDS = 0.05
"""How often the child's lookout looks for the parent's question."""
MOST_PLACES = 8


# -- the child's side ---------------------------------------------------------------------------
def _rank(thread_idx, block_idx, grid, block) -> int:
    sizes = [max(g, b) for g, b in zip(grid, block)] if grid and block else []
    if sizes:
        return max([i + 1 for i, s in enumerate(sizes) if s > 1] + [1])
    values = list(zip(thread_idx, block_idx))
    return max([i + 1 for i, (t, b) in enumerate(values) if t or b] + [1])


def _simulator_thread(thread) -> tuple | None:
    """(thread, block) of one of Numba's simulator threads (one per GPU thread), or None."""
    thread_idx, block_idx = getattr(thread, "threadIdx", None), getattr(thread, "blockIdx", None)
    if thread_idx is None or block_idx is None:
        return None
    t, b = tuple(int(v) for v in thread_idx), tuple(int(v) for v in block_idx)
    manager = getattr(thread, "_manager", None) or getattr(thread, "manager", None)
    rank = _rank(t, b, getattr(manager, "_grid_dim", None), getattr(manager, "_block_dim", None))
    return t[:rank], b[:rank]


def snapshot(learner_file: str, skip=()) -> list:
    """Where each thread of this process is in `learner_file` (its innermost frame there):
    places as dicts (line, function, kernel, thread, block, threads), GPU threads first."""
    doctor = sys.modules.get("grader.doctor.kernel")
    threads = {t.ident: t for t in threading.enumerate()}
    places: dict = {}
    for ident, frame in sys._current_frames().items():
        if ident in skip:
            continue
        while frame is not None and frame.f_code.co_filename != learner_file:
            frame = frame.f_back
        if frame is None:
            continue
        gpu, engine = _simulator_thread(threads.get(ident)), "simulator"
        if gpu is None and doctor is not None and ident == threading.main_thread().ident:
            gpu, engine = doctor.running_thread(), "doctor"  # the doctor runs every GPU thread in the main thread
        key = (frame.f_lineno, frame.f_code.co_name, gpu is not None)
        place = places.get(key)
        if place is None:
            places[key] = {
                "engine": engine if gpu is not None else None,
                "line": frame.f_lineno,
                "function": frame.f_code.co_name,
                "kernel": gpu is not None,
                "thread": list(gpu[0]) if gpu else None,
                "block": list(gpu[1]) if gpu else None,
                "threads": 1,
            }
        else:
            place["threads"] += 1
    found = sorted(places.values(), key=lambda p: (not p["kernel"], -p["threads"], p["line"]))
    return found[:MOST_PLACES]


class Lookout:
    """The child's thread that answers the parent's "where is it?" once, while the
    submission loads and its cases run (not while a GPU is timed: it would only add noise)."""

    def __init__(self, task_dir: Path, learner_file: str, write):
        self.task_dir, self.learner_file, self.write = Path(task_dir), learner_file, write
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="zerogpu-lookout", daemon=True)

    def start(self) -> "Lookout":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        asked = self.task_dir / ASKED
        while not self._stop.wait(POLL_SECONDS):
            if os.path.exists(asked):
                try:
                    places = snapshot(self.learner_file, skip=(threading.get_ident(),))
                    self.write(self.task_dir / ANSWER, {"places": places})
                except Exception:  # noqa: BLE001 - the parent then says what it knows without it
                    pass
                return


# -- the parent's side --------------------------------------------------------------------------
def ask(task_dir: Path, proc) -> list:
    """Ask a child that ran out of time where it is; its places ([] when it does not say)."""
    try:
        (Path(task_dir) / ASKED).touch()
    except OSError:
        return []
    answer = Path(task_dir) / ANSWER
    end = time.monotonic() + ANSWER_SECONDS
    while not answer.exists() and proc.poll() is None and time.monotonic() < end:
        time.sleep(0.01)
    try:
        data = json.loads(answer.read_text()[:100_000])
    except (OSError, ValueError):
        return []
    return [p for p in (_place(p) for p in (data.get("places") if isinstance(data, dict) else None) or []) if p][
        :MOST_PLACES
    ]


def _ints(value) -> list | None:
    if isinstance(value, list) and 1 <= len(value) <= 3 and all(type(v) is int and 0 <= v < 1 << 31 for v in value):
        return value
    return None


def _place(data) -> dict | None:
    """One place from the child's answer, checked field by field (or None)."""
    if not isinstance(data, dict):
        return None
    line, function, threads = data.get("line"), data.get("function"), data.get("threads", 1)
    if type(line) is not int or not 0 < line < 1 << 31 or not isinstance(function, str) or len(function) > 200:
        return None
    thread, block = _ints(data.get("thread")), _ints(data.get("block"))
    kernel = data.get("kernel") is True and thread is not None and block is not None
    return {
        "engine": data.get("engine") if kernel and data.get("engine") in ("doctor", "simulator") else None,
        "line": line,
        "function": function if function.isidentifier() else "",
        "kernel": kernel,
        "thread": thread if kernel else None,
        "block": block if kernel else None,
        "threads": threads if type(threads) is int and threads > 0 else 1,
    }


def engine_of(places: list) -> str | None:
    """Which CPU engine was running the kernel when time ran out ("doctor" or "simulator")."""
    return next((p["engine"] for p in places if p.get("engine")), None)


def _fmt(values: list) -> str:
    return str(values[0]) if len(values) == 1 else "(" + ", ".join(map(str, values)) + ")"


def _loop_around(source: str, line: int):
    """The innermost `for` or `while` loop whose lines hold `line` (an ast node), or None."""
    try:
        tree = pysource.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    loops = [
        node
        for node in ast.walk(tree)
        if isinstance(node, (ast.For, ast.While)) and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    return max(loops, key=lambda node: node.lineno, default=None)


def loop_hint(source: str, line: int, kernel: bool = True) -> str:
    """What to look at in the loop around `line` (in a kernel: a GPU thread's loop); "" when
    the line is in no loop."""
    loop = _loop_around(source, line)
    if loop is None:
        return ""
    lines = source.splitlines()
    head = lines[loop.lineno - 1].strip() if loop.lineno <= len(lines) else ""
    if isinstance(loop, ast.While):
        hint = (
            f"The `while` loop on line {loop.lineno} (`{head}`) ends only when its condition turns "
            "false, so every pass must change what it tests"
        )
        if not kernel:
            return hint + " (or leave it with `break`)."
        return hint + (
            ": in a grid-stride loop, `i += cuda.gridsize(1)` at the end of the body (and before "
            "any `continue`). A thread that never leaves its loop keeps the whole kernel from finishing."
        )
    hint = f"The `for` loop on line {loop.lineno} (`{head}`) makes more passes than the time allows: check its `range`"
    if not kernel:
        return hint + " and any loop inside it."
    return hint + (
        " (stop at the number of elements, not a product of sizes; in a grid-stride loop step by "
        "`cuda.gridsize(1)`, not by 1) and any loop inside it."
    )


def timeout_message(places: list, source: str, limit: float, phase: str = "running") -> tuple:
    """(message, line, that line's text, hint) for a case the time limit stopped during `phase`
    ("starting", "loading" the file, "running" a case); line None and hint "" when the child
    did not say where it was."""
    limit_text = f"the time limit of {limit:g} s"
    if phase == "starting":
        return f"The process that runs your code did not start within {limit_text} (a busy machine?).", None, "", ""
    if not places:
        what = "Loading your file" if phase == "loading" else "Your code"
        return f"{what} made no progress within {limit_text}, so it was stopped: a loop that never ends?", None, "", ""
    place = places[0]
    line = place["line"]
    lines = source.splitlines()
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    about = [f"`{text}`"] if text else []
    if place["kernel"]:
        others = place["threads"] - 1
        about.append(f"thread {_fmt(place['thread'])} of block {_fmt(place['block'])}")
        if others:
            about[-1] += f" and {others} other thread{'s' if others > 1 else ''}"
        who, doing = f"Your kernel `{place['function']}`", "still running"
    elif phase == "loading":
        who, doing = "Your file", "still being loaded"
    else:
        function = place["function"]
        who = f"Your `{function}`" if function and function != "<module>" else "Your code"
        doing = "still running"
    at = f"at line {line}" + (f" ({', '.join(about)})" if about else "")
    message = f"{who} was {doing} {at} when {limit_text} ran out, so it was stopped: a loop that never ends?"
    return message, line, text, loop_hint(source, line, place["kernel"])

"""Whether a check would check the cell as it stands: which cells of a notebook ran, in what
order, and how each run ended, as IPython tells its kernel (`pre_run_cell`, `post_run_cell`).

A check takes `launch` as Python has it: from the cell that defined it last, in whatever order
the cells ran. It is refused, with one line and nothing recorded (`NotChecked`), when that
`launch` is not what its cell holds now:
- the cell raised when it last ran (a syntax error leaves the `launch` of the run before);
- a later run of the same cell (where the front end says which cell ran: JupyterLab sends each
  cell's id and tags) holds other code, or, where it does not (nbclient, a terminal), a later
  run of a cell that defines a function of that name raised;
- the notebook, saved after that run (the lab saves it), holds no cell with the code that ran;
- in JupyterLab, the cell is another exercise's exercise cell.
A `launch` defined outside any cell (a module, a file) is checked as it is.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from grader.exercises import LADDER
from grader.render import prose_html
from grader.textsafe import html_text

KEPT_RUNS = 500
"""Runs remembered per kernel: a learner's session, not every run of a week-long kernel."""


@dataclass(frozen=True)
class Run:
    """One run of a cell."""

    filename: str
    """The name IPython compiled the cell under: the `co_filename` of what it defines."""
    text: str
    cell_id: str | None
    """Where the front end says which cell ran (JupyterLab), else None."""
    tags: tuple
    started: float
    """`time.time()` when it started."""
    error: str = ""
    """How it raised ("SyntaxError"), or "" when it did not."""
    line: int | None = None
    """The cell's line it raised at, when known."""


@dataclass(frozen=True)
class NotChecked:
    """What a check cell shows when the `launch` it was given is not its cell as it stands:
    nothing ran, nothing is recorded."""

    exercise: str
    reason: str
    verdict: str = "not_checked"
    """Not a check's verdict (none ran): what code comparing verdicts sees."""
    passed: bool = False

    def __str__(self) -> str:
        return f"{self.exercise}: NOT CHECKED — {self.reason}"

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return (
            "<div style='border-left:6px solid #9a6700;padding:6px 12px;font-family:sans-serif'>"
            f"<b>{html_text(self.exercise)}</b>: <b style='color:#9a6700'>Not checked</b> — "
            f"{prose_html(self.reason)}</div>"
        )


class CellRuns:
    """The runs of one kernel, oldest first; `current` is the run under way."""

    def __init__(self, shell):
        self.shell = shell
        self.runs: list[Run] = []
        self.current: Run | None = None
        self.when_done: list = []
        """Called once each, when the cell running now has finished (`after`)."""

    def before(self, info) -> None:
        number = self.shell.execution_count - (1 if getattr(info, "store_history", False) else 0)
        self.current = self._run(info, number)

    def after(self, result) -> None:
        info = getattr(result, "info", None)
        if info is None:
            return
        run = self.current if self.current is not None and self.current.text == info.raw_cell else None
        run = run or self._run(info, result.execution_count)
        self.current = None
        error = result.error_before_exec or result.error_in_exec
        if error is not None:
            run = Run(**{**run.__dict__, "error": type(error).__name__, "line": _error_line(error, run.filename)})
        self.runs = (self.runs + [run])[-KEPT_RUNS:]
        calls, self.when_done = self.when_done, []
        for call in calls:
            call()

    def _run(self, info, number) -> Run:
        raw = info.raw_cell or ""
        meta = getattr(info, "cell_meta", None) or {}
        tags = meta.get("tags") if isinstance(meta, dict) else None
        return Run(
            filename=_code_name(self.shell, raw, number),
            text=raw,
            cell_id=getattr(info, "cell_id", None),
            tags=tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else (),
            started=time.time(),
        )


def _code_name(shell, raw: str, number) -> str:
    """The file name IPython compiles this cell's code under (ipykernel: from the text alone)."""
    try:
        return shell.compile.get_code_name(raw, shell.transform_cell(raw), number)
    except Exception:  # noqa: BLE001 - a shell of another make: the cell cannot be matched
        return ""


def _error_line(error: BaseException, filename: str) -> int | None:
    if isinstance(error, SyntaxError):
        return error.lineno
    line, tb = None, error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


_watching: CellRuns | None = None


def watch() -> CellRuns | None:
    """In an IPython kernel or shell, start following its cell runs (once); None elsewhere."""
    global _watching
    ipython = sys.modules.get("IPython")  # loaded by every IPython shell; never loaded here
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return None
    if _watching is not None and _watching.shell is shell:
        return _watching
    _watching = CellRuns(shell)
    shell.events.register("pre_run_cell", _watching.before)
    shell.events.register("post_run_cell", _watching.after)
    return _watching


def not_as_it_stands(exercise_id: str, launch, runs: CellRuns | None = None, notebook=None) -> NotChecked | None:
    """Why `launch` is not its cell as it stands (see the module's docstring), or None. `notebook`:
    the saved notebook's path (default: the one the server started this kernel for)."""
    runs = runs if runs is not None else _watching
    code = getattr(launch, "__code__", None)
    if runs is None or code is None or not code.co_filename:
        return None
    current = runs.current
    if current is not None and current.filename == code.co_filename:
        return None  # defined by the cell running now, the check's own
    defining = next((r for r in reversed(runs.runs) if r.filename == code.co_filename), None)
    if defining is None:
        return None
    reason = _later_runs(defining, runs.runs, getattr(launch, "__name__", "launch"))
    if reason is None and _edited_since(defining, notebook or os.environ.get("JPY_SESSION_NAME")):
        reason = f"{_cell(defining)} was changed after it last ran: run it, then run this check."
    if reason is None:
        reason = _other_exercise(defining, exercise_id)
    return NotChecked(exercise_id, reason) if reason else None


def _cell(run: Run) -> str:
    return "your exercise cell" if "exercise" in run.tags or not run.tags else "the cell that defines `launch`"


def _later_runs(defining: Run, runs: list[Run], name: str) -> str | None:
    """Why a later run of the defining cell (by id; without ids, of a cell defining `name`), or
    the defining run itself, makes this `launch` stale."""
    index = next((i for i, r in enumerate(runs) if r is defining), len(runs))
    after = runs[index + 1 :]
    if defining.cell_id:
        later = [r for r in after if r.cell_id == defining.cell_id]
    else:
        defines = re.compile(rf"^\s*(?:async\s+)?def\s+{re.escape(name)}\b", re.MULTILINE)
        later = [r for r in after if defines.search(r.text) and r.filename != defining.filename]
    latest = later[-1] if later else defining
    if latest.error:
        at = f" at line {latest.line}" if latest.line else ""
        return (
            f"{_cell(latest)} raised {latest.error}{at} when it last ran: fix it and run it again, then run this check."
        )
    if latest is not defining and defining.cell_id:
        return (
            f"this `{name}` comes from an earlier run of its cell, which has run since with other code: "
            "run the cells from the exercise cell down again."
        )
    return None


def _edited_since(run: Run, notebook) -> bool:
    """Does the notebook, saved after `run` started, hold that cell with other code (by the
    cell's id), or, where runs carry no id, no cell with that code at all?"""
    try:
        path = Path(notebook)
        if not notebook or path.suffix != ".ipynb" or path.stat().st_mtime <= run.started:
            return False
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        sources = {
            cell.get("id"): "".join(s) if isinstance(s, list) else str(s)
            for cell in cells
            if cell.get("cell_type") == "code"
            for s in [cell.get("source", "")]
        }
    except (OSError, ValueError, TypeError, AttributeError):
        return False
    ran = run.text.rstrip()
    if run.cell_id and run.cell_id in sources:
        return sources[run.cell_id].rstrip() != ran
    return all(source.rstrip() != ran for source in sources.values())


def _other_exercise(run: Run, exercise_id: str) -> str | None:
    """In JupyterLab, which tells each cell's tags: `launch` from another exercise's cell."""
    other = [t for t in run.tags if t in LADDER and t != exercise_id]
    if "exercise" not in run.tags or not other or exercise_id in run.tags:
        return None
    return (
        f"`launch` was last defined by the {other[0]} exercise cell: run the {exercise_id} "
        "exercise cell again, then run this check."
    )

"""Grading rows again, on the very inputs they were graded with: their stored seed and the
task's secret (`zerogpu grade CLASS --regrade STUDENT/EXERCISE ...`, patterns as globs, or
`--failed`: every row that did not pass). A new row replaces the old one and keeps what it
replaced (`regraded_from`), so the gradebook, the report and the CSVs can say it was regraded
and what it was before."""

from __future__ import annotations

import time
from fnmatch import fnmatchcase

from grader.classroom.gradebook import NOT_SUBMITTED
from grader.result.row import ClassRow
from grader.textsafe import unsurrogate

GLOB = frozenset("*?[")
"""A pattern with one of these is a glob: rows it cannot replay are graded on new inputs."""


class RegradeError(ValueError):
    """A row that cannot be regraded: the message says why and what to do instead."""


def plan(tasks: list, book, which: str):
    """(the task, its stored row) for "STUDENT/EXERCISE", checked to be replayable."""
    student, _, exercise_id = which.rpartition("/")
    task = next((t for t in tasks if (t.student, t.exercise) == (student, exercise_id)), None)
    if not student or task is None:
        raise RegradeError(f"no hand-in {which!r} here: name it STUDENT/EXERCISE, as `zerogpu report` lists them")
    row = book.row(student, exercise_id)
    if row is None or row.seed is None:
        raise RegradeError(
            f"{which} has no stored seed to replay (never graded, or graded before seeds were kept): "
            "`zerogpu grade` grades it on new inputs"
        )
    if task.source is None:
        raise RegradeError(f"{which} has nothing to grade now ({task.note or 'no file handed in'})")
    if task.sha256 != row.submission_sha256:
        raise RegradeError(
            f"{which} changed since it was graded, so its inputs would replay another file: "
            "`zerogpu grade` grades the new one"
        )
    return task, row


def select(tasks: list, book, patterns=(), failed: bool = False) -> tuple[list, dict]:
    """(the tasks to grade, {(student, exercise): stored row} of those replayed on their seed)
    for STUDENT/EXERCISE `patterns` (globs: `*/vector_add`, `ann/*`) and, with `failed`, every
    row that did not pass. A named row (no glob) that cannot be replayed is refused (`plan`);
    a globbed or failed one that changed since, or has no seed, is graded on new inputs."""
    chosen: dict = {}
    for pattern in patterns:
        pattern = unsurrogate(pattern)
        if not GLOB & set(pattern):
            task, row = plan(tasks, book, pattern)
            chosen[(task.student, task.exercise)] = (task, row)
            continue
        if "/" not in pattern:
            raise RegradeError(f"{pattern!r} names no row: write STUDENT/EXERCISE (globs allowed: '*/vector_add')")
        matched = [t for t in tasks if fnmatchcase(f"{t.student}/{t.exercise}", pattern)]
        if not matched:
            raise RegradeError(f"no hand-in matches {pattern!r}: `zerogpu report` lists them as STUDENT/EXERCISE")
        for task in matched:
            chosen.setdefault((task.student, task.exercise), (task, None))
    if failed:
        stored = book.by_task()
        for task in tasks:
            row = stored.get((task.student, task.exercise))
            if row is not None and row.verdict not in ("passed", NOT_SUBMITTED):
                chosen.setdefault((task.student, task.exercise), (task, None))
    todo, replaying = [], {}
    for key, (task, row) in chosen.items():
        row = row or _replayable(task, book)
        if task.source is None:
            continue  # nothing handed in now: nothing to grade again
        todo.append(task)
        if row is not None:
            replaying[key] = row
    return todo, replaying


def _replayable(task, book) -> ClassRow | None:
    """The stored row a task can be graded again from (same file, a seed), else None."""
    row = book.row(task.student, task.exercise)
    ok = row is not None and row.seed is not None and row.submission_sha256 == task.sha256
    return row if ok else None


def comparison(before: ClassRow, after: ClassRow) -> list[tuple[str, str, str]]:
    """(what, stored, regraded) lines for showing a regrade beside the row it replaced."""

    def cases(row: ClassRow) -> str:
        found = row.result.cases if row.result else ()
        return f"{sum(c.passed for c in found)} of {len(found)}"

    def when(row: ClassRow) -> str:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(row.graded_at)) + f" on {row.graded_on or '?'}"

    def message(row: ClassRow) -> str:
        return row.result.message if row.result else ""

    return [
        ("verdict", before.verdict, after.verdict),
        ("score", f"{before.score:g}/{before.max_score:g}", f"{after.score:g}/{after.max_score:g}"),
        ("cases passed", cases(before), cases(after)),
        ("message", message(before), message(after)),
        ("graded", when(before), when(after)),
        ("seed", str(before.seed), str(after.seed)),
    ]

"""Grading one disputed (student, exercise) row again, on the very inputs it was graded with:
its stored seed and the task's secret (`zerogpu grade CLASS --regrade STUDENT/EXERCISE`). The
new row replaces the old one and keeps what it replaced (`regraded_from`), so the gradebook,
the report and the CSVs can say it was regraded and what it was before."""

from __future__ import annotations

import time

from grader.result.row import ClassRow


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

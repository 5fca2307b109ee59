"""`zerogpu check ID FILE`: a learner's check of a file, recorded in their progress."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grader.checking.check import check_file
from grader.containment.sandbox import SandboxUnavailable
from grader.exercises import exercise
from grader.learner import progress
from grader.result import CheckResult
from grader.settings import CheckOptions


class CannotCheck(ValueError):
    """Nothing was checked: the message is one line naming the fix (a missing file, graded
    mode without its sandbox)."""


@dataclass(frozen=True)
class Attempt:
    result: CheckResult
    not_recorded: str | None = None
    """Why the learner's progress did not keep this attempt (one line), or None."""


def attempt(exercise_id: str, path: Path, options: CheckOptions, starting=None, progress_line=None) -> Attempt:
    """Check `path` against the exercise and record the attempt. `starting(cases)` hears how
    many cases will run (the exercise's, then the last again with fresh inputs) once the file
    is found; `progress_line(text)` which case is under way."""
    if not Path(path).is_file():
        raise CannotCheck(f"no such file: {path}")
    if starting is not None:
        starting(len(exercise(exercise_id).spec.cases) + 1)
    try:
        result = check_file(exercise_id, Path(path), options=options, progress=progress_line)
    except SandboxUnavailable as err:
        raise CannotCheck(str(err)) from None
    return Attempt(result, progress.record(result))

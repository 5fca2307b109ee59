"""A class gradebook's row as data: one student's result for one exercise, as the report reads
it (grader/classroom/gradebook.py stores it; `ClassRow.from_dict` reads one of its rows)."""

from __future__ import annotations

from dataclasses import dataclass

from grader.result import CheckResult
from grader.result.stored import known, rebuilt


@dataclass(frozen=True)
class Regraded:
    """What a regraded row was before (`zerogpu grade --regrade`), and what that one replaced."""

    verdict: str
    score: float
    max_score: float
    graded_at: float | None = None
    graded_on: str | None = None
    seed: int | None = None
    regraded_from: Regraded | None = None

    @classmethod
    def from_dict(cls, data: dict | None) -> Regraded | None:
        if not data:
            return None
        return rebuilt(cls, data, regraded_from=cls.from_dict(data.get("regraded_from")))


@dataclass(frozen=True)
class ClassRow:
    """One (student, exercise) of a class: its result, or its status when nothing was graded."""

    student: str
    exercise: str
    verdict: str
    """The result's verdict, or "not_submitted"."""
    score: float = 0.0
    max_score: float = 0.0
    backend: str | None = None
    result: CheckResult | None = None
    """None: nothing was graded (nothing handed in)."""
    submission_sha256: str | None = None
    graded_at: float = 0.0
    graded_on: str | None = None
    """The machine and GPU that graded it."""
    seed: int | None = None
    regraded_from: Regraded | None = None

    @classmethod
    def from_dict(cls, data: dict) -> ClassRow:
        """A row as the gradebook gives it (`Gradebook.rows()`: its result and regrade parsed
        from JSON), written by this grader or an earlier one."""
        fields = known(cls, data)
        fields["result"] = CheckResult.from_stored(data.get("result"))
        fields["regraded_from"] = Regraded.from_dict(data.get("regraded_from"))
        return cls(**fields)

"""`zerogpu list` and `zerogpu progress`: the ladder as this learner stands on it."""

from __future__ import annotations

from dataclasses import dataclass

from grader.exercises import ladder
from grader.learner.progress import NextStep, ladder_status, next_step


@dataclass(frozen=True)
class Standing:
    """One exercise of the ladder and how far this learner got with it."""

    stage: int
    exercise: str
    title: str
    lesson: str
    state: str
    """"passed", "attempted" or "not started"."""
    tier: str | None = None
    """The best speed tier a passing GPU attempt reached."""
    attempts: int = 0
    last_verdict: str | None = None


@dataclass(frozen=True)
class Ladder:
    standings: tuple[Standing, ...]
    next: NextStep | None
    """What to do next; None: every exercise passes."""
    status: dict
    """`progress.ladder_status()`, as the progress picture and `--json` take it."""

    @property
    def passed(self) -> int:
        return sum(s.state == "passed" for s in self.standings)


def my_ladder() -> Ladder:
    """Every exercise in ladder order with this learner's recorded attempts."""
    status = ladder_status()
    standings = []
    for ex in ladder():
        entry = status.get(ex.id) or {}
        standings.append(
            Standing(
                ex.spec.stage,
                ex.id,
                ex.spec.title,
                ex.spec.lesson,
                entry.get("status", "not started"),
                entry.get("tier"),
                entry.get("attempts", 0),
                entry.get("last_verdict"),
            )
        )
    return Ladder(tuple(standings), next_step(status), status)

"""How one check result becomes the points of a course's two autograder cells per exercise.

Correctness is worth the exercise's `Spec.points`; speed the top tier's points, and only a
GPU can award them. On a host without a GPU the speed part is *not graded*: nbgrader still
needs a number, so it records 0 and the cell is flagged "needs manual grade" (see
grader/course/plugins.py and grader/course/grading.py); our own gradebook keeps the whole
result, whose `backend` and `speed` say why (`speed_status`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from grader.result import CheckResult
from grader.result.scoring import ALL_OR_NOTHING, PARTIAL_CREDIT, PER_CASE, credited  # noqa: F401 - a course setting

PARTS = ("correctness", "speed")


def result_digest(result: CheckResult) -> str:
    """A short fingerprint of one stored result (of its JSON form, keys sorted): feedback shows
    it, to be told apart from a later grading of the same hand-in (grader/course/feedback.py)."""
    stored = json.loads(result.to_json())
    return hashlib.sha256(json.dumps(stored, sort_keys=True, default=str).encode()).hexdigest()[:16]


def test_cell_id(exercise_id: str, part: str) -> str:
    """The nbgrader grade id of an exercise's autograder cell for `part`."""
    return f"{exercise_id}_{part}"


def part_of(grade_id: str) -> tuple[str, str] | None:
    """(exercise id, part) of one of our autograder cells' grade id, else None."""
    for part in PARTS:
        if grade_id.endswith(f"_{part}"):
            return grade_id[: -len(part) - 1], part
    return None


def max_points(spec, part: str) -> int:
    if part == "correctness":
        return int(spec.points)
    if spec.benchmark is None:
        return 0
    return max((t.points for t in spec.benchmark.tiers), default=0)


@dataclass(frozen=True)
class PartScore:
    """The points of one autograder cell, and what to tell the learner about them."""

    part: str
    points: float
    max_points: float
    graded: bool
    """False: speed could not be graded here (no GPU, or timing failed). nbgrader records
    `points` (0) and the cell is flagged for manual grading."""
    note: str
    """One or two sentences for the learner (and the instructor reading the feedback)."""


def speed_status(result: CheckResult | None) -> str:
    """For reports, from a gradebook row's result: "graded", "not reached" (correctness
    failed or nothing submitted), "not graded: no GPU" or "not graded: timing failed"."""
    if result is None or not result.passed:
        return "graded" if result is not None and result.speed.measured else "not reached"
    if result.speed.measured:
        return "graded"
    return "not graded: no GPU" if result.backend == "simulator" else "not graded: timing failed"


def part_scores(result: CheckResult | None, spec, partial_credit: str = PER_CASE) -> dict[str, PartScore]:
    """Both parts' points from a result; None: nothing submitted. `partial_credit`: PER_CASE or
    ALL_OR_NOTHING (grader/result/scoring.py)."""
    top = {part: float(max_points(spec, part)) for part in PARTS}
    if result is None:
        nothing = "Nothing to grade: no cell for this exercise was found in your notebook."
        return {part: PartScore(part, 0.0, top[part], True, nothing) for part in PARTS}
    details = result.speed.details
    speed_points = float(details.points) if result.passed and details else 0.0
    return {
        "correctness": _correctness(result, speed_points, top["correctness"], partial_credit),
        "speed": _speed(result, speed_points, top["speed"]),
    }


def _correctness(result: CheckResult, speed_points: float, top: float, partial_credit: str) -> PartScore:
    earned = round(max(float(result.score) - speed_points, 0.0), 2)
    points = credited(earned, result.verdict, partial_credit)
    why = result.verdict.replace("_", " ")
    if points != earned:
        passed = sum(c.passed for c in result.cases)
        why += f"; all or nothing: {passed} of {len(result.cases)} cases passed"
    return PartScore("correctness", min(points, top), top, True, f"Correctness: {points:g} / {top:g} points ({why}).")


def _speed(result: CheckResult, speed_points: float, top: float) -> PartScore:
    status = speed_status(result)
    if status == "graded":
        note = result.speed.details.summary
        if result.verdict != "passed":
            speed_points = 0.0
            note = f"{note} No speed points: {result.verdict.replace('_', ' ')}.".strip()
        return PartScore("speed", speed_points, top, True, f"{note} Speed: {speed_points:g} / {top:g} points.".strip())
    if status == "not reached":
        return PartScore(
            "speed",
            0.0,
            top,
            True,
            f"Speed: 0 / {top:g} points. Speed is measured only once every correctness case passes.",
        )
    why = (
        "this notebook was graded without a GPU, on a CPU simulator, which cannot time a kernel"
        if status.endswith("no GPU")
        else result.speed.reason or "timing failed"
    )
    return PartScore(
        "speed",
        0.0,
        top,
        False,
        (
            f"Speed not graded: {why}. nbgrader records 0 / {top:g} for this cell and marks it "
            "'needs manual grade'; your instructor regrades speed on a GPU host or enters the points."
        ),
    )

"""How one check result becomes the points of a course's two autograder cells per exercise.

Correctness is worth the exercise's `Spec.points`; speed the top tier's points, and only a
GPU can award them. On a host without a GPU the speed part is *not graded*: nbgrader still
needs a number, so it records 0 and the cell is flagged "needs manual grade" (see
grader/course/plugins.py and grader/course/grading.py); our own gradebook keeps the whole
result, whose `backend` and `speed` say why (`speed_status`).
"""

from __future__ import annotations

from dataclasses import dataclass


PARTS = ("correctness", "speed")
PER_CASE, ALL_OR_NOTHING = "per_case", "all_or_nothing"
PARTIAL_CREDIT = (PER_CASE, ALL_OR_NOTHING)
"""How correctness points are earned, a course setting (`c.ZeroGPU.partial_credit` in its
nbgrader_config.py): per_case, the exercise's points times the share of cases passed (a racy
kernel earns the cases it happens to pass); all_or_nothing, every point only when every case
passes."""


def every_case_passed(result: dict) -> bool:
    """Did every correctness case pass (the verdict is passed, or too slow)?"""
    return result.get("verdict") in ("passed", "too_slow")


def result_digest(result: dict) -> str:
    """A short fingerprint of one stored result: feedback shows it, to be told apart from a
    later grading of the same hand-in (grader/course/feedback.py)."""
    import hashlib
    import json

    return hashlib.sha256(json.dumps(result, sort_keys=True, default=str).encode()).hexdigest()[:16]


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


def speed_status(result: dict | None) -> str:
    """For reports, from a gradebook row's result: "graded", "not reached" (correctness
    failed or nothing submitted), "not graded: no GPU" or "not graded: timing failed"."""
    if not result or not result.get("passed"):
        return "graded" if result and result.get("speed", {}).get("measured") else "not reached"
    speed = result.get("speed") or {}
    if speed.get("measured"):
        return "graded"
    return "not graded: no GPU" if result.get("backend") == "simulator" else "not graded: timing failed"


def part_scores(result: dict | None, spec, partial_credit: str = PER_CASE) -> dict[str, PartScore]:
    """Both parts' points from a result (`CheckResult.to_dict()`); None: nothing submitted.
    `partial_credit`: PER_CASE or ALL_OR_NOTHING (`PARTIAL_CREDIT`)."""
    top = {part: float(max_points(spec, part)) for part in PARTS}
    if result is None:
        nothing = "Nothing to grade: no cell for this exercise was found in your notebook."
        return {part: PartScore(part, 0.0, top[part], True, nothing) for part in PARTS}
    speed = result.get("speed") or {}
    details = speed.get("details") or {}
    speed_points = float(details.get("points", 0)) if result["passed"] and speed.get("measured") else 0.0
    correctness = round(max(float(result["score"]) - speed_points, 0.0), 2)
    why = result["verdict"].replace("_", " ")
    if partial_credit == ALL_OR_NOTHING and not every_case_passed(result):
        cases = result.get("cases") or ()
        passed = sum(c.get("verdict") == "passed" for c in cases)
        if correctness:
            why += f"; all or nothing: {passed} of {len(cases)} cases passed"
        correctness = 0.0
    scores = {
        "correctness": PartScore(
            "correctness",
            min(correctness, top["correctness"]),
            top["correctness"],
            True,
            f"Correctness: {correctness:g} / {top['correctness']:g} points ({why}).",
        )
    }
    status = speed_status(result)
    if status == "graded":
        note = details.get("summary", "")
        if result["verdict"] != "passed":
            speed_points = 0.0
            note = f"{note} No speed points: {result['verdict'].replace('_', ' ')}.".strip()
        scores["speed"] = PartScore(
            "speed",
            speed_points,
            top["speed"],
            True,
            f"{note} Speed: {speed_points:g} / {top['speed']:g} points.".strip(),
        )
    elif status == "not reached":
        scores["speed"] = PartScore(
            "speed",
            0.0,
            top["speed"],
            True,
            f"Speed: 0 / {top['speed']:g} points. Speed is measured only once every correctness case passes.",
        )
    else:
        why = (
            "this notebook was graded without a GPU, on a CPU simulator, which cannot time a kernel"
            if status.endswith("no GPU")
            else speed.get("reason", "timing failed")
        )
        scores["speed"] = PartScore(
            "speed",
            0.0,
            top["speed"],
            False,
            (
                f"Speed not graded: {why}. nbgrader records 0 / {top['speed']:g} for this cell and marks it "
                "'needs manual grade'; your instructor regrades speed on a GPU host or enters the points."
            ),
        )
    return scores

"""The one scoring rule a course applies on top of a check's score: how much of it a result
that failed some case keeps. A course's feedback cells and the class report both use it."""

from __future__ import annotations

PER_CASE, ALL_OR_NOTHING = "per_case", "all_or_nothing"
PARTIAL_CREDIT = (PER_CASE, ALL_OR_NOTHING)
"""How correctness points are earned, a course setting (`c.ZeroGPU.partial_credit` in its
nbgrader_config.py): per_case, the exercise's points times the share of cases passed (a racy
kernel earns the cases it happens to pass); all_or_nothing, every point only when every case
passes."""
EVERY_CASE_PASSED = ("passed", "too_slow")
"""Verdicts of a result whose correctness cases all passed."""


def every_case_passed(verdict: str) -> bool:
    """Did every correctness case pass (the verdict is passed, or too slow)?"""
    return verdict in EVERY_CASE_PASSED


def credited(points: float, verdict: str, partial_credit: str = PER_CASE) -> float:
    """The correctness points a result of `verdict` keeps under `partial_credit`: all of them
    per case; under all or nothing, none unless every case passed."""
    if partial_credit == ALL_OR_NOTHING and not every_case_passed(verdict):
        return 0.0
    return points

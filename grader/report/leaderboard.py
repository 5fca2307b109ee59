"""The leaderboard: per exercise, the fastest passing kernels timed on a GPU, with their
speedup over the baseline and the share of the GPU's measured ceiling they reached (GB/s or
TFLOP/s, `SpeedDetails.throughput`). Only passing results whose timing is trusted count (not
below the roofline floor, no work outside the timed region); without any, there is no board and
the report says why instead of showing an empty one. Names are the instructor's to show
(`zerogpu report --names`)."""

from __future__ import annotations

from dataclasses import dataclass

from grader.report.data import ladder_order, trusted_speed

TOP = 5
"""Kernels listed per exercise."""
NO_SPEEDS = (
    "Nothing was timed on a GPU: the class was graded on the CPU (the kernel doctor or Numba's "
    "simulator), which checks correctness only. Grade on a machine with an NVIDIA GPU to rank kernels."
)
NONE_PASSED = "Speeds were measured on a GPU, but no passing kernel has a trusted timing yet."


@dataclass(frozen=True)
class Entry:
    rank: int
    student: str
    speedup: float
    """Median of paired baseline ÷ learner times."""
    of_ceiling: float | None
    """Achieved throughput ÷ this GPU's measured ceiling; None when it has none."""
    throughput: str
    """"2,950 GB/s on NVIDIA H200", or ""."""
    tier: str | None


@dataclass(frozen=True)
class Board:
    exercise: str
    timed: int
    """Passing kernels with a trusted timing."""
    entries: tuple


def boards(rows, top: int = TOP) -> tuple:
    """One `Board` per exercise with a passing kernel timed on a GPU, ladder order."""
    timed: dict = {}
    for row in rows:
        details = trusted_speed(row)
        if row.verdict == "passed" and details is not None and details.trusted:
            timed.setdefault(row.exercise, []).append((row.student, details))
    found = []
    for exercise_id in ladder_order(timed):
        ranked = sorted(timed[exercise_id], key=lambda item: (-item[1].speedup_vs_baseline.median, item[0]))
        entries = tuple(_entry(k + 1, student, d) for k, (student, d) in enumerate(ranked[:top]))
        found.append(Board(exercise_id, len(ranked), entries))
    return tuple(found)


def _entry(rank: int, student: str, details) -> Entry:
    flow = details.throughput
    shown = f"{flow.achieved:,.0f} {flow.unit}" if flow else ""
    if shown and details.device:
        shown += f" on {details.device}"
    return Entry(
        rank,
        student,
        float(details.speedup_vs_baseline.median),
        flow.fraction_of_ceiling if flow else None,
        shown,
        details.tier,
    )


def why_empty(rows) -> str:
    """Why there is no board: nothing timed on a GPU, or nothing passing with a trusted time."""
    return NONE_PASSED if any(trusted_speed(row) for row in rows) else NO_SPEEDS

"""The instructor's class report: a gradebook (one row per student and exercise, grader/
gradebook.py) becomes report.html and two CSVs an instructor can forward or open in a
spreadsheet.

`analyse` makes one pass over the rows into frozen summaries; grader/report/plots.py draws a
few charts from those summaries (one figure per chart, never one per row) and
grader/report/page.py lays out a self-contained page. Speed figures come only from results
timed on a GPU; with none, the report says so and shows no number.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from grader.exercises import LADDER, ROOT, exercise
from grader.classroom.gradebook import (
    AUTOGRADER_CELLS,
    FEEDBACK,
    FILE_NOT_GRADED,
    NOT_A_STUDENT,
    NOT_GRADED,
    NOT_SUBMITTED,
    UNTOUCHED,
    Gradebook,
)
from grader.result import SLOW_MISTAKES, telling_mistake
from grader.result.row import ClassRow, Regraded
from grader.result.scoring import ALL_OR_NOTHING, PER_CASE, credited, every_case_passed
from grader.result.speed import SpeedDetails
from grader.authoring.spec import DEFAULT_TIERS
from grader.report.stats import (  # noqa: F401 - the summaries' types and names, read from here too
    EXERCISES_CSV,
    FAILURES,
    NO_GPU,
    NOT_ATTEMPTED,
    REPORT_HTML,
    SIMILARITY_CSV,
    STUDENTS_CSV,
    SUBMISSIONS_CSV,
    VERDICT_ORDER,
    ClassReport,
    ExerciseStats,
    Mark,
    StudentStats,
)

__all__ = ["ALL_OR_NOTHING", "PER_CASE", "analyse"]  # partial credit: grader/result/scoring.py


def mistake(row: ClassRow) -> str:
    """What a class report counts a hand-in under: the finding its feedback names
    (`result.telling_mistake`: the first failing case that names a cause, a doctor finding or
    the pattern in its output; results stored before results named one: the doctor's first
    finding with a fix), else its verdict when it failed; "" for a clean pass or no hand-in."""
    named = telling_mistake(row.result) if row.result else ""
    if named:
        return named
    return row.verdict if row.verdict in FAILURES else ""


def load_rows(db: Path) -> list[ClassRow]:
    """The gradebook's rows (`analyse` reads them)."""
    db = Path(db)
    if not db.is_file():
        raise FileNotFoundError(f"no gradebook at {db}")
    return Gradebook(db, read_only=True).rows()


def ladder_order(exercise_ids) -> list[str]:
    """Ladder exercises in ladder order, then any others alphabetically."""
    ids = set(exercise_ids)
    return [e for e in LADDER if e in ids] + sorted(ids - set(LADDER))


def trusted_speed(row: ClassRow) -> SpeedDetails | None:
    """The speed details of a row timed on a GPU, when they can be believed."""
    details = row.result.speed.details if row.result else None
    if details is None or details.speedup_vs_baseline is None:
        return None
    if not every_case_passed(row.verdict):
        return None  # a timed run gave a wrong answer: its time measures nothing useful
    return details


def analyse(rows: list[ClassRow], source: str = "", notes=(), partial_credit: str = PER_CASE) -> ClassReport:
    """One pass over the gradebook's rows (`Gradebook.rows()`) and notes
    (`Gradebook.notes()`). `partial_credit`: ALL_OR_NOTHING counts no points for an exercise
    whose cases did not all pass."""
    exercise_ids = ladder_order(r.exercise for r in rows)
    tally = _Tally(
        {e: _exercise_tally() for e in exercise_ids},
        {(n["student"], n["about"], n["kind"]): n["text"] for n in notes},
        _starter_hashes(exercise_ids),
        partial_credit,
    )
    for row in rows:
        tally.count(row)
    for marks in tally.by_student.values():  # a gradebook may lack rows for work never handed in
        for e in exercise_ids:
            if e not in marks:
                tally.by_exercise[e]["verdicts"][NOT_SUBMITTED] += 1
    files: dict = {}
    others = []
    for (student, about, kind), text in tally.noted.items():
        if kind == NOT_A_STUDENT or (kind == FILE_NOT_GRADED and not about):  # "": an older run's link
            others.append((student, text))
        elif kind == FILE_NOT_GRADED:
            files.setdefault(student, []).append((about, text))
            tally.by_student.setdefault(student, {})  # a student whose only hand-in was misnamed
    exercises = tuple(_exercise_stats(e, tally.by_exercise[e]) for e in exercise_ids)
    possible = {e.id: e.max_score for e in exercises}
    students = tuple(
        _student_stats(name, tally.by_student[name], exercise_ids, possible, tuple(files.get(name, ())))
        for name in sorted(tally.by_student)
    )
    stale = tuple(sorted((s, about, text) for (s, about, kind), text in tally.noted.items() if kind == FEEDBACK))
    times = tally.times
    return ClassReport(
        source,
        exercises,
        students,
        dict(tally.backends),
        tuple(sorted(tally.devices)),
        (min(times), max(times)) if times else None,
        tally.timed_on,
        tuple(sorted(tally.unsandboxed)),
        stale,
        partial_credit,
        tuple(sorted(others)),
    )


def _exercise_tally() -> dict:
    """What `analyse` counts of one exercise, for `_exercise_stats`."""
    return {
        "verdicts": Counter(),
        "scores": [],
        "max": 0.0,
        "speedups": [],
        "required": None,
        "tiers": Counter(),
        "rejected": 0,
        "mistakes": Counter(),
        "slow": Counter(),
    }


@dataclass
class _Tally:
    """What `analyse` counts over the class, one row at a time."""

    by_exercise: dict
    noted: dict
    """(student, about, kind) -> the note's text."""
    starters: dict
    partial_credit: str
    by_student: dict = field(default_factory=dict)
    """Student -> exercise -> `Mark`."""
    backends: Counter = field(default_factory=Counter)
    devices: set = field(default_factory=set)
    times: list = field(default_factory=list)
    timed_on: dict = field(default_factory=dict)
    unsandboxed: list = field(default_factory=list)

    def count(self, row: ClassRow) -> None:
        acc, key = self.by_exercise[row.exercise], (row.student, row.exercise)
        verdict = NOT_ATTEMPTED if self._untouched(row) else row.verdict
        acc["verdicts"][verdict] += 1
        score = credited(row.score, verdict, self.partial_credit)
        named = mistake(row) if verdict != NOT_ATTEMPTED else ""
        if named and named in SLOW_MISTAKES and every_case_passed(verdict):
            acc["slow"][named] += 1
        elif named and verdict in FAILURES:
            acc["mistakes"][named] += 1
        note, cells = self.noted.get((*key, NOT_GRADED), ""), self.noted.get((*key, AUTOGRADER_CELLS), "")
        self.by_student.setdefault(row.student, {})[row.exercise] = _mark(row, verdict, named, score, note, cells)
        self.times.append(row.graded_at)
        if row.result and row.result.unsandboxed:
            self.unsandboxed.append(key)
        if verdict in (NOT_SUBMITTED, NOT_ATTEMPTED):
            return
        self.backends[_engine(row)] += 1
        acc["scores"].append(score)
        acc["max"] = max(acc["max"], row.max_score)
        _add_speed(acc, row, self.devices)
        speed = trusted_speed(row)
        if speed and speed.device:
            self.timed_on[key] = speed.device

    def _untouched(self, row: ClassRow) -> bool:
        """Is the hand-in the starter as given out (nbgrader: the released cell)?"""
        if row.verdict == NOT_SUBMITTED:
            return False
        noted = self.noted.get((row.student, row.exercise, UNTOUCHED))
        return bool(noted or (row.submission_sha256 and row.submission_sha256 == self.starters.get(row.exercise)))


def _mark(row: ClassRow, verdict: str, named: str, score: float, note: str, cells: str) -> Mark:
    cases = row.result.cases if row.result else ()
    failing = next((c for c in cases if not c.passed), None)
    return Mark(
        verdict,
        named,
        score,
        row.max_score or 0.0,
        sum(c.passed for c in cases),
        len(cases),
        row.result.message if row.result else "",
        failing.line if failing else None,
        failing.source if failing else "",
        note,
        cells,
        _regraded(row.regraded_from),
    )


def _regraded(before: Regraded | None) -> str:
    """What a regraded row was before ("was wrong_result, 0/10"), "" for a row never regraded."""
    if before is None:
        return ""
    return f"was {before.verdict}, {before.score:g}/{before.max_score:g}"


def _engine(row: ClassRow) -> str:
    """What ran a result's cases: "gpu", "doctor", "simulator" (grader/result `CheckResult.engine`)."""
    if row.result is not None and row.backend in ("gpu", "simulator"):
        return row.result.engine
    return row.backend or "unknown"


def _starter_hashes(exercise_ids) -> dict:
    """Exercise id -> sha256 of its starter file, for those that have one."""
    out = {}
    for e in exercise_ids:
        starter = ROOT / "exercises" / f"{e}.py"
        if starter.is_file():
            out[e] = hashlib.sha256(starter.read_bytes()).hexdigest()
    return out


def _add_speed(acc: dict, row: ClassRow, devices: set) -> None:
    details = trusted_speed(row)
    if details is None:
        return
    if details.device:
        devices.add(details.device)
    if details.required_speedup is not None:
        acc["required"] = details.required_speedup
    if not details.trusted:
        acc["rejected"] += 1
        return
    acc["speedups"].append(float(details.speedup_vs_baseline.median))
    if row.verdict == "passed" and details.tier:
        acc["tiers"][details.tier] += 1


def _exercise_stats(exercise_id: str, acc: dict) -> ExerciseStats:
    stage = LADDER.index(exercise_id) if exercise_id in LADDER else None
    max_score = acc["max"] or _spec_points(exercise_id)
    return ExerciseStats(
        exercise_id,
        stage,
        dict(acc["verdicts"]),
        max_score,
        tuple(acc["scores"]),
        tuple(acc["speedups"]),
        acc["required"],
        dict(acc["tiers"]),
        acc["rejected"],
        dict(acc["mistakes"]),
        dict(acc["slow"]),
    )


def _spec_points(exercise_id: str) -> float:
    """Correctness points from the spec, for an exercise nobody handed in."""
    try:
        return float(exercise(exercise_id).spec.points)
    except Exception:  # noqa: BLE001 - an unknown or unloadable id simply counts nothing
        return 0.0


def _student_stats(name: str, marks: dict, exercise_ids: list, possible: dict, files: tuple) -> StudentStats:
    marks = {e: marks.get(e) or Mark(NOT_SUBMITTED) for e in exercise_ids}
    verdicts = {e: m.verdict for e, m in marks.items()}
    score = sum(m.score for m in marks.values())
    stuck_on = next((e for e in exercise_ids if verdicts[e] != "passed"), None)
    return StudentStats(name, verdicts, score, sum(possible.values()), stuck_on, marks, files)


# ---- CSV --------------------------------------------------------------------------------


def tier_names(report: ClassReport) -> list[str]:
    seen = {t for e in report.exercises for t in e.tiers}
    known = [t.name for t in DEFAULT_TIERS]
    return known + sorted(seen - set(known))

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
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from grader.exercises import LADDER, ROOT, exercise
from grader.classroom.gradebook import (
    AUTOGRADER_CELLS,
    FEEDBACK,
    FILE_NOT_GRADED,
    NOT_GRADED,
    NOT_SUBMITTED,
    UNTOUCHED,
    Gradebook,
)
from grader.result import SLOW_MISTAKES, VERDICTS
from grader.result.doctor import mistake_of
from grader.result.row import ClassRow, Regraded
from grader.result.scoring import ALL_OR_NOTHING, PER_CASE, credited, every_case_passed
from grader.result.speed import SpeedDetails
from grader.authoring.spec import DEFAULT_TIERS

NOT_ATTEMPTED = "not_attempted"
"""A hand-in byte-identical to the starter (exercises/<id>.py): nothing tried, nothing wrong."""
VERDICT_ORDER = (
    "passed",
    "too_slow",
    *(v for v in VERDICTS if v not in ("passed", "too_slow")),
    NOT_ATTEMPTED,
    NOT_SUBMITTED,
)
"""Column and stacking order: success, nearly, the failures, the starter untouched, nothing handed in."""
FAILURES = tuple(v for v in VERDICT_ORDER if v not in ("passed", NOT_ATTEMPTED, NOT_SUBMITTED))
NO_GPU = "Speed was not graded: no GPU on the grading host."
STUDENTS_CSV, EXERCISES_CSV, SUBMISSIONS_CSV, REPORT_HTML = (
    "students.csv",
    "exercises.csv",
    "submissions.csv",
    "report.html",
)
__all__ = ["ALL_OR_NOTHING", "PER_CASE", "analyse"]  # partial credit: grader/result/scoring.py


def mistake(row: ClassRow) -> str:
    """What a class report counts a hand-in under: the mistake its result names
    (grader.result.MISTAKES; results stored before results named one: the doctor's first
    finding with a fix), else its verdict when it failed; "" for a clean pass or no hand-in."""
    result = row.result
    named = result.mistake if result else ""
    if not named and row.verdict in FAILURES and result and result.doctor:
        named = next((mistake_of(f) for f in result.doctor.findings if f.fix), "")
    if named:
        return named
    return row.verdict if row.verdict in FAILURES else ""


@dataclass(frozen=True)
class Mark:
    """One student's hand-in for one exercise: what a cell of the report's grid opens."""

    verdict: str
    """The verdict, or "not_submitted", or "not_attempted"."""
    mistake: str = ""
    """`mistake(row)`: a name in grader.result.MISTAKES, a failing verdict, or ""."""
    score: float = 0.0
    max_score: float = 0.0
    cases_passed: int = 0
    cases: int = 0
    """Correctness cases run (0: none ran, e.g. a syntax error)."""
    message: str = ""
    line: int | None = None
    """The learner's line the message is about, when known."""
    source: str = ""
    """That line's text."""
    note: str = ""
    """Why nothing was graded (a notebook that is not JSON, a misnamed file...), when known."""
    autograder_cells: str = ""
    """nbgrader courses: the hand-in's edited or deleted autograder cells."""
    regraded: str = ""
    """"" unless the row was regraded on its stored seed (`zerogpu grade --regrade`): then what
    it was before ("was wrong_result, 0/10")."""


@dataclass(frozen=True)
class ExerciseStats:
    """One exercise across the class."""

    id: str
    stage: int | None
    """Its place on the ladder (None: not a ladder exercise)."""
    verdicts: dict
    """Verdict (or "not_submitted") -> how many students."""
    max_score: float
    scores: tuple
    """Scores of the submissions (not of the students who handed nothing in)."""
    speedups: tuple
    """Median speedup over the baseline of each submission timed on a GPU whose timing was
    trusted (correct answers, no hidden work, not below the roofline floor)."""
    required_speedup: float | None
    """The speedup a correct submission needs; known only from GPU results."""
    tiers: dict
    """Speed tier -> passing submissions that reached it."""
    rejected_timings: int = 0
    """GPU timings refused as impossible or partly untimed."""
    mistakes: dict = field(default_factory=dict)
    """Mistake (`mistake(row)`) -> failing submissions with it."""
    slow: dict = field(default_factory=dict)
    """Mistake of a correct kernel ("bank_conflicts", "uncoalesced") -> submissions with it."""

    @property
    def students(self) -> int:
        return sum(self.verdicts.values())

    @property
    def submitted(self) -> int:
        """Hand-ins with an attempt in them (the untouched starter does not count)."""
        return self.students - self.verdicts.get(NOT_SUBMITTED, 0) - self.verdicts.get(NOT_ATTEMPTED, 0)

    @property
    def not_attempted(self) -> int:
        return self.verdicts.get(NOT_ATTEMPTED, 0)

    @property
    def passed(self) -> int:
        return self.verdicts.get("passed", 0)

    @property
    def pass_rate(self) -> float | None:
        """Passed / submitted; None when nobody handed it in."""
        return self.passed / self.submitted if self.submitted else None

    @property
    def common_failure(self) -> tuple[str, int] | None:
        failures = [(self.verdicts.get(v, 0), -i, v) for i, v in enumerate(FAILURES)]
        count, _, verdict = max(failures)
        return (verdict, count) if count else None

    @property
    def common_mistake(self) -> tuple[str, int] | None:
        """The most common mistake among failing submissions (ties: by name), with its count."""
        if not self.mistakes:
            return None
        name, count = min(self.mistakes.items(), key=lambda item: (-item[1], item[0]))
        return name, count

    @property
    def median_speedup(self) -> float | None:
        return statistics.median(self.speedups) if self.speedups else None

    @property
    def meeting_requirement(self) -> int:
        need = self.required_speedup
        return sum(s >= need for s in self.speedups) if need is not None else 0


@dataclass(frozen=True)
class StudentStats:
    """One student across the exercises of the gradebook."""

    name: str
    verdicts: dict
    """Exercise id -> verdict, "not_submitted" included."""
    score: float
    max_score: float
    stuck_on: str | None
    """The first exercise in ladder order not passed (None: all passed)."""
    marks: dict = field(default_factory=dict)
    """Exercise id -> `Mark`."""
    files: tuple = ()
    """(path under the student's folder, why it was not graded) of files no exercise reads."""

    @property
    def submitted(self) -> int:
        return sum(v not in (NOT_SUBMITTED, NOT_ATTEMPTED) for v in self.verdicts.values())

    @property
    def passed(self) -> int:
        return sum(v == "passed" for v in self.verdicts.values())

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.max_score if self.max_score else 0.0


@dataclass(frozen=True)
class ClassReport:
    """Everything the page and the CSVs show, computed once."""

    source: str
    exercises: tuple
    students: tuple
    backends: dict
    """What ran the graded submissions' cases ("gpu", "doctor", "simulator") -> how many."""
    """Backend ("gpu", "simulator") -> rows graded there."""
    devices: tuple
    """GPU names the speed figures were measured on."""
    graded_between: tuple | None
    """(first, last) grading time, seconds since the epoch."""
    timed_on: dict = field(default_factory=dict)
    """(student, exercise) -> the GPU that timed that result (a cluster may mix models)."""
    unsandboxed: tuple = ()
    """(student, exercise) of results graded without the OS sandbox (`--unsandboxed`)."""
    stale_feedback: tuple = ()
    """(student, assignment, what is out of date and the commands that refresh it): nbgrader
    feedback showing results graded again since."""
    partial_credit: str = PER_CASE

    @property
    def not_graded(self) -> tuple:
        """(student, exercise, why) of hand-ins that could not be graded: a notebook that is not
        JSON, a deleted exercise cell, a file handed in under another name."""
        return tuple(
            (s.name, e, m.note)
            for s in self.students
            for e, m in s.marks.items()
            if m.note and m.verdict == NOT_SUBMITTED
        )

    @property
    def files(self) -> tuple:
        """(student, path, why) of every file no exercise reads."""
        return tuple((s.name, path, why) for s in self.students for path, why in s.files)

    @property
    def edited_cells(self) -> tuple:
        """(student, exercise, which cells) of hand-ins whose autograder cells were edited or deleted."""
        return tuple(
            (s.name, e, m.autograder_cells) for s in self.students for e, m in s.marks.items() if m.autograder_cells
        )

    @property
    def slow(self) -> Counter:
        """Mistake of correct kernels -> submissions with it, across the class."""
        total = Counter()
        for e in self.exercises:
            total.update(e.slow)
        return total

    @property
    def timed_per_device(self) -> dict:
        """GPU -> how many results it timed."""
        return dict(Counter(self.timed_on.values()))

    @property
    def submissions(self) -> int:
        return sum(e.submitted for e in self.exercises)

    @property
    def possible(self) -> int:
        return len(self.students) * len(self.exercises)

    @property
    def silent(self) -> tuple:
        """Students who attempted nothing: nothing handed in, or only untouched starters or files
        no exercise reads."""
        return tuple(s for s in self.students if s.submitted == 0)

    @property
    def active(self) -> tuple:
        return tuple(s for s in self.students if s.submitted)

    @property
    def median_percent(self) -> float | None:
        """Median score of the students who handed something in."""
        return statistics.median(s.percent for s in self.active) if self.active else None

    @property
    def hardest(self) -> ExerciseStats | None:
        """Lowest pass rate (ties: more submissions) among the exercises handed in by at least
        a fifth as many students as the most handed-in one, so that two submissions at the
        top of the ladder do not outweigh twenty lower down."""
        tried = [e for e in self.exercises if e.submitted]
        if not tried:
            return None
        enough = max(e.submitted for e in tried) / 5
        return min((e for e in tried if e.submitted >= enough), key=lambda e: (e.pass_rate, -e.submitted))

    @property
    def speed_graded(self) -> bool:
        return any(e.speedups for e in self.exercises)

    @property
    def failures(self) -> Counter:
        """Failing verdict -> submissions with it, across the class."""
        return Counter({v: n for v in FAILURES if (n := sum(e.verdicts.get(v, 0) for e in self.exercises))})

    @property
    def mistakes(self) -> Counter:
        """Mistake (`mistake(row)`: the doctor's finding or the output's pattern, else the
        verdict) -> failing submissions with it, across the class."""
        total = Counter()
        for e in self.exercises:
            total.update(e.mistakes)
        return total

    @property
    def stuck(self) -> Counter:
        """Exercise -> students (who handed something in) stuck on it: their first exercise
        not passed, when they tried it and it failed."""
        return Counter(s.stuck_on for s in self.active if s.stuck_on and s.verdicts[s.stuck_on] in FAILURES)

    @property
    def not_attempted(self) -> Counter:
        """Exercise -> students who handed in its starter untouched."""
        return Counter({e.id: e.not_attempted for e in self.exercises if e.not_attempted})


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
    for (student, about, kind), text in tally.noted.items():
        if kind == FILE_NOT_GRADED:
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

"""The instructor's class report: a gradebook (one row per student and exercise, grader/
gradebook.py) becomes report.html and two CSVs an instructor can forward or open in a
spreadsheet.

`analyse` makes one pass over the rows into frozen summaries; grader/report/plots.py draws a
few charts from those summaries (one figure per chart, never one per row) and
grader/report/page.py lays out a self-contained page. Speed figures come only from results
timed on a GPU; with none, the report says so and shows no number.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from grader.exercises import LADDER
from grader.classroom.gradebook import NOT_SUBMITTED, Gradebook
from grader.result import VERDICTS
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
STUDENTS_CSV, EXERCISES_CSV, REPORT_HTML = "students.csv", "exercises.csv", "report.html"


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
    """Backend ("gpu", "simulator") -> rows graded there."""
    devices: tuple
    """GPU names the speed figures were measured on."""
    graded_between: tuple | None
    """(first, last) grading time, seconds since the epoch."""
    timed_on: dict = field(default_factory=dict)
    """(student, exercise) -> the GPU that timed that result (a cluster may mix models)."""
    unsandboxed: tuple = ()
    """(student, exercise) of results graded without the OS sandbox (`--unsandboxed`)."""

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
        """Students who handed nothing in."""
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
    def mistakes(self) -> Counter:
        """Failing verdict -> submissions with it, across the class."""
        return Counter({v: n for v in FAILURES if (n := sum(e.verdicts.get(v, 0) for e in self.exercises))})

    @property
    def stuck(self) -> Counter:
        """Exercise -> students (who handed something in) stuck on it: their first exercise
        not passed, when they tried it and it failed."""
        return Counter(s.stuck_on for s in self.active if s.stuck_on and s.verdicts[s.stuck_on] in FAILURES)

    @property
    def not_attempted(self) -> Counter:
        """Exercise -> students who handed in its starter untouched."""
        return Counter({e.id: e.not_attempted for e in self.exercises if e.not_attempted})


def load_rows(db: Path) -> list[dict]:
    db = Path(db)
    if not db.is_file():
        raise FileNotFoundError(f"no gradebook at {db}")
    return Gradebook(db).rows()


def ladder_order(exercise_ids) -> list[str]:
    """Ladder exercises in ladder order, then any others alphabetically."""
    ids = set(exercise_ids)
    return [e for e in LADDER if e in ids] + sorted(ids - set(LADDER))


def trusted_speed(row: dict) -> dict | None:
    """The speed details of a row timed on a GPU, when they can be believed."""
    speed = (row.get("result") or {}).get("speed") or {}
    details = speed.get("details") or {}
    if not speed.get("measured") or "speedup_vs_baseline" not in details:
        return None
    if row["verdict"] not in ("passed", "too_slow"):
        return None  # a timed run gave a wrong answer: its time measures nothing useful
    return details


def analyse(rows: list[dict], source: str = "") -> ClassReport:
    """One pass over the gradebook rows."""
    exercise_ids = ladder_order(r["exercise"] for r in rows)
    by_exercise = {
        e: {
            "verdicts": Counter(),
            "scores": [],
            "max": 0.0,
            "speedups": [],
            "required": None,
            "tiers": Counter(),
            "rejected": 0,
        }
        for e in exercise_ids
    }
    by_student: dict = {}
    backends, devices, times, timed_on, unsandboxed = Counter(), set(), [], {}, []
    starters = _starter_hashes(exercise_ids)
    for row in rows:
        acc, verdict = by_exercise[row["exercise"]], row["verdict"]
        if (
            verdict != NOT_SUBMITTED
            and row.get("submission_sha256")
            and (row["submission_sha256"] == starters.get(row["exercise"]))
        ):
            verdict = NOT_ATTEMPTED
        acc["verdicts"][verdict] += 1
        by_student.setdefault(row["student"], {})[row["exercise"]] = (verdict, row["score"])
        times.append(row["graded_at"])
        if (row.get("result") or {}).get("unsandboxed"):
            unsandboxed.append((row["student"], row["exercise"]))
        if verdict in (NOT_SUBMITTED, NOT_ATTEMPTED):
            continue
        backends[row["backend"] or "unknown"] += 1
        acc["scores"].append(row["score"])
        acc["max"] = max(acc["max"], row["max_score"])
        _add_speed(acc, row, devices)
        if (trusted_speed(row) or {}).get("device"):
            timed_on[(row["student"], row["exercise"])] = trusted_speed(row)["device"]
    for marks in by_student.values():  # a gradebook may lack rows for work never handed in
        for e in exercise_ids:
            if e not in marks:
                by_exercise[e]["verdicts"][NOT_SUBMITTED] += 1
    exercises = tuple(_exercise_stats(e, by_exercise[e]) for e in exercise_ids)
    possible = {e.id: e.max_score for e in exercises}
    students = tuple(_student_stats(name, by_student[name], exercise_ids, possible) for name in sorted(by_student))
    return ClassReport(
        source,
        exercises,
        students,
        dict(backends),
        tuple(sorted(devices)),
        (min(times), max(times)) if times else None,
        timed_on,
        tuple(sorted(unsandboxed)),
    )


def _starter_hashes(exercise_ids) -> dict:
    """Exercise id -> sha256 of its starter file, for those that have one."""
    import hashlib

    from grader.exercises import ROOT

    out = {}
    for e in exercise_ids:
        starter = ROOT / "exercises" / f"{e}.py"
        if starter.is_file():
            out[e] = hashlib.sha256(starter.read_bytes()).hexdigest()
    return out


def _add_speed(acc: dict, row: dict, devices: set) -> None:
    details = trusted_speed(row)
    if details is None:
        return
    if details.get("device"):
        devices.add(details["device"])
    if details.get("required_speedup") is not None:
        acc["required"] = details["required_speedup"]
    if details.get("below_floor") or details.get("hidden_work"):
        acc["rejected"] += 1
        return
    acc["speedups"].append(float(details["speedup_vs_baseline"]["median"]))
    if row["verdict"] == "passed" and details.get("tier"):
        acc["tiers"][details["tier"]] += 1


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
    )


def _spec_points(exercise_id: str) -> float:
    """Correctness points from the spec, for an exercise nobody handed in."""
    try:
        from grader.exercises import exercise

        return float(exercise(exercise_id).spec.points)
    except Exception:  # noqa: BLE001 - an unknown or unloadable id simply counts nothing
        return 0.0


def _student_stats(name: str, marks: dict, exercise_ids: list, possible: dict) -> StudentStats:
    verdicts = {e: marks[e][0] if e in marks else NOT_SUBMITTED for e in exercise_ids}
    score = sum(s for _, s in marks.values())
    stuck_on = next((e for e in exercise_ids if verdicts[e] != "passed"), None)
    return StudentStats(name, verdicts, score, sum(possible.values()), stuck_on)


# ---- CSV --------------------------------------------------------------------------------


def tier_names(report: ClassReport) -> list[str]:
    seen = {t for e in report.exercises for t in e.tiers}
    known = [t.name for t in DEFAULT_TIERS]
    return known + sorted(seen - set(known))

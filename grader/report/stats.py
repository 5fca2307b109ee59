"""The class report's summaries as data: one `Mark` per hand-in, `ExerciseStats`,
`StudentStats` and the whole `ClassReport` that report.html, the feedback pages and the CSVs
show (grader/report/data.py `analyse` makes them from a gradebook)."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from grader.classroom.gradebook import NOT_SUBMITTED
from grader.result import VERDICTS
from grader.result.scoring import PER_CASE

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
STUDENTS_CSV, EXERCISES_CSV, SUBMISSIONS_CSV, SIMILARITY_CSV, REPORT_HTML = (
    "students.csv",
    "exercises.csv",
    "submissions.csv",
    "similarity.csv",
    "report.html",
)


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
    not_students: tuple = ()
    """(name, why) of entries of the class folder that are no student: a link (to another
    student's folder: a copy?), an unreadable folder. Never in students.csv."""
    pairs: tuple = ()
    """Hand-ins of one exercise far more alike than the class's usual pair
    (grader/report/similarity.py `Pair`), most alike first."""
    boards: tuple = ()
    """The leaderboard (grader/report/leaderboard.py `Board`s): empty without GPU timings."""
    no_board: str = ""
    """Why there is no leaderboard, when there is none."""
    names: bool = False
    """Show students' names on the leaderboard (`zerogpu report --names`)."""
    feedback_pages: dict = field(default_factory=dict)
    """Student -> the file name of their feedback page under feedback/ (a plain class)."""

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

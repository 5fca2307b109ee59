"""A grading run, what `zerogpu grade DIR` does for a class folder (`grade_folder`), and the
parts an nbgrader course's run shares (grader/course/grade_course.py): one run per gradebook,
the notes a result cannot hold, a regrade's plan, and the graders (this machine's pool of
workers, or a Dask cluster). A run tells whoever started it what happens (`Listener`) and
returns what it did (`GradingRun`); it prints nothing."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader.backend import current
from grader.classroom.distributed import dask_client, grade_class_on, worker_count
from grader.classroom.gradebook import AUTOGRADER_CELLS, NOT_A_STUDENT, NOT_GRADED, UNTOUCHED, WORKER_LOST, Gradebook
from grader.classroom.grading import NOT_THIS_RUN, default_workers, grade_class, pending, scan
from grader.classroom.regrade import RegradeError, comparison, select
from grader.containment.sandbox import forced_off, unavailable
from grader.gpu.ceilings import ceilings
from grader.paths import gradebook_file
from grader.settings import CheckOptions


class GradingError(ValueError):
    """A run refused before anything is graded: one line that says what to do."""


@dataclass(frozen=True)
class GradeRequest:
    """What `zerogpu grade` was asked for."""

    check: CheckOptions = CheckOptions()
    """How each task is checked (graded mode, always): `case_timeout`, `unsandboxed`."""
    exercises: tuple | None = None
    """The exercise ids to grade; None: every one found."""
    workers: int | None = None
    """Checks at once (None: one per CPU core, or per GPU); with a `scheduler`, its workers."""
    scheduler: str | None = None
    """A Dask scheduler ("local" or tcp://HOST:8786), else this machine's pool."""
    regrade: tuple = ()
    """STUDENT/EXERCISE patterns (globs allowed): those rows alone, again on their stored seed."""
    failed: bool = False
    """Every row that did not pass, again on its stored seed (with `regrade`'s rows)."""
    db: str | None = None
    """The gradebook file (None: DIR/gradebook.sqlite)."""


class Listener:
    """What a run says as it goes; each method does nothing unless overridden."""

    def not_graded(self, what: str, why: str) -> None:
        """`what` ("ann/notes.txt") is in the folder but not graded, for `why`."""

    def not_student(self, name: str, why: str) -> None:
        """`name`, in the class folder, is no student (a link to another's folder), for `why`."""

    def starting(self, heading: str, total: int) -> None:
        """`total` tasks are about to be graded; `heading` says where."""

    def done(self, task, result) -> None:
        """One task finished: its CheckResult, or None when nothing was handed in."""


@dataclass(frozen=True)
class GradingRun:
    """What a run did."""

    book: Path
    rows: int
    """Rows in the gradebook now."""
    regraded: list = field(default_factory=list)
    """(student, exercise, [(what, stored, regraded)]) for each row graded again on its seed."""
    lost: list = field(default_factory=list)
    """(student, exercise, note) for each task of the run a lost Dask worker had started."""
    synced: list = field(default_factory=list)
    """An nbgrader course: (assignment, grades written to nbgrader's gradebook, its URL)."""
    stale: list = field(default_factory=list)
    """An nbgrader course: (assignment, students whose feedback is out of date, the commands
    that refresh it)."""
    needs_look: int = 0
    """What this run found that `zerogpu report` lists under "Needs a look": entries that are no
    student (links), files not graded, hand-ins that could not be graded."""
    ungraded_speed: list = field(default_factory=list)
    """An nbgrader course graded without a GPU: (assignment, speed points in nbgrader's max
    score that nobody could earn here, that max score)."""


@contextmanager
def gradebook_for(directory: Path, request: GradeRequest):
    """The folder's gradebook, held for this run alone; refused (GradingError) when the
    sandbox is missing, the folder is not there, another run holds the gradebook or the
    regrade asked for cannot replay."""
    missing = None if request.check.unsandboxed or forced_off() else unavailable()
    if missing:
        raise GradingError(missing)
    if not Path(directory).is_dir():
        raise GradingError(f"no such folder: {directory}")
    book = Gradebook(gradebook_file(directory, request.db))
    try:
        with book.only_run():  # one run per gradebook: a second refuses with one line
            yield book
    except RegradeError as err:
        raise GradingError(str(err)) from None


def grade_folder(class_dir: Path, request: GradeRequest, listener: Listener = Listener()) -> GradingRun:
    """`zerogpu grade DIR`: every DIR/<student>/<exercise>.py graded (what is not yet graded,
    or the rows `request.regrade` and `request.failed` name), the rest of the folder noted."""
    class_dir = Path(class_dir)
    with gradebook_for(class_dir, request) as book:
        found = scan(class_dir, list(request.exercises) if request.exercises else None)
        todo, replaying = regrading(request, found.tasks, book)
        for name, why in found.not_students:
            listener.not_student(name, why)
        for student, name, reason in found.strays:
            listener.not_graded(f"{student}/{name}", reason)
        strays = {(s, n): why for s, n, why in found.strays if why != NOT_THIS_RUN}
        keep_notes(book, found.tasks, strays, "")
        book.replace_notes(NOT_A_STUDENT, {(name, ""): why for name, why in found.not_students})
        heading = f"{len(found.tasks)} tasks, {len(found.tasks) - len(todo)} already graded, {len(todo)} to grade"
        lost = grade_tasks(
            todo, book, request, (class_dir.resolve(), book.path.parent.resolve()), heading, listener, replaying
        )
        look = len(found.not_students) + len(strays) + sum(bool(t.note or t.autograder_cells) for t in found.tasks)
        return GradingRun(book.path, len(book.rows()), regraded(book, replaying), lost, needs_look=look)


def grade_tasks(todo, book, request: GradeRequest, private, heading: str, listener: Listener, replaying=None) -> list:
    """Grade `todo` into `book` where the request says; returns `GradingRun.lost`.
    `private`: folders no submission may read; `replaying`: {(student, exercise): stored row}."""
    options = replace(request.check, private=tuple(str(p) for p in private))
    with graders(request.workers, request.scheduler) as where:
        listener.starting(f"{heading} {where.description}; results in {book.path}", len(todo))
        where.grade(todo, book, options, listener.done, replaying)
    return lost_workers(book, todo) if request.scheduler else []


@dataclass(frozen=True)
class Graders:
    """Where tasks are graded: this machine's pool of worker threads, or a Dask cluster (`client`)."""

    backend: str
    workers: int
    client: object = None

    @property
    def description(self) -> str:
        if self.client is None:
            return f"on the {self.backend} with {self.workers} worker(s)"
        return f"on the Dask cluster at {self.client.scheduler.address} with {self.workers} worker(s) now"

    def grade(self, tasks, book, options: CheckOptions, on_done=None, replaying=None) -> int:
        """grade_class here, or grade_class_on the cluster: the same rows either way."""
        common = {"backend": self.backend, "options": options, "on_done": on_done}
        if self.client is None:
            return grade_class(tasks, book, workers=self.workers, replaying=replaying, **common)
        return grade_class_on(self.client, tasks, book, replaying=replaying, **common)


@contextmanager
def graders(workers: int | None = None, scheduler: str | None = None):
    """Graders for a run: with `scheduler`, a Dask cluster (docs/CLUSTER.md) whose workers
    measure their own GPU; else this machine's pool, a GPU's ceilings measured first, before
    any worker competes for it."""
    backend = current()
    if scheduler:
        with dask_client(scheduler, workers, backend) as client:
            yield Graders(backend, worker_count(client), client)
        return
    if backend == "gpu":
        ceilings()
    yield Graders(backend, workers or default_workers(backend))


def lost_workers(book, todo) -> list:
    """(student, exercise, note) for each task of `todo` that a lost Dask worker had started."""
    ran = {(t.student, t.exercise) for t in todo}
    return [
        (note["student"], note["about"], note["text"])
        for note in book.notes()
        if note["kind"] == WORKER_LOST and (note["student"], note["about"]) in ran
    ]


UNTOUCHED_NOTE = "handed in as given out (the starter, unchanged): counted as not attempted"


def keep_notes(book, tasks, files: dict, prefix: str) -> None:
    """What the results cannot say, into the gradebook's notes: why a task has nothing to
    grade, which autograder cells a hand-in changed, which hand-ins are the untouched starter,
    the files no exercise reads ({(student, name): why}, under `prefix`)."""
    book.set_notes(NOT_GRADED, {(t.student, t.exercise): t.note for t in tasks})
    book.set_notes(AUTOGRADER_CELLS, {(t.student, t.exercise): t.autograder_cells for t in tasks})
    book.set_notes(UNTOUCHED, {(t.student, t.exercise): UNTOUCHED_NOTE if t.untouched else "" for t in tasks})
    book.replace_file_notes(prefix, files)


def regrading(request: GradeRequest, tasks, book) -> tuple[list, dict | None]:
    """The tasks of a run: with `request.regrade` or `request.failed`, those rows alone
    (`regrade.select`) and {key: stored row} of those replayed on their seed; else the tasks
    not yet graded for this exact file, and None."""
    if not (request.regrade or request.failed):
        return pending(tasks, book), None
    return select(tasks, book, request.regrade, request.failed)


def regraded(book, replaying: dict | None) -> list:
    """`GradingRun.regraded`: each regraded row beside the one it replaced."""
    return [
        (student, exercise_id, comparison(before, book.row(student, exercise_id)))
        for (student, exercise_id), before in (replaying or {}).items()
    ]

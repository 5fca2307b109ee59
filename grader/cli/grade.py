"""`zerogpu grade DIR [ASSIGNMENT]`: a class folder (DIR/<student>/<exercise>.py) or an nbgrader
course's submissions, graded in parallel and resumably. The run is grader/classroom/run.py
`grade_folder` or grader/course/grade_course.py `grade_course`; this prints what it says."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from grader.classroom.kind import FolderKindError, kind_of
from grader.cli.console import EXIT_PASSED, console, error
from grader.settings import CLASS_CASE_TIMEOUT, CheckOptions


def cmd_grade(args) -> int:
    from grader.classroom.run import GradeRequest, GradingError, grade_folder  # noqa: PLC0415 - the sandbox, child processes and replayers: loaded by `zerogpu grade`, not by every command's start

    request = GradeRequest(
        check=CheckOptions(case_timeout=args.timeout, unsandboxed=args.unsandboxed, task_timeout=args.task_timeout),
        exercises=tuple(args.exercises.split(",")) if args.exercises else None,
        workers=args.workers,
        scheduler=args.scheduler,
        regrade=tuple(args.regrade or ()),
        failed=args.failed,
        db=args.db,
    )
    out = console()
    try:
        kind = kind_of(args.directory, args.kind)
    except FolderKindError as err:
        return error(str(err))
    if kind.note:
        out.print(f"note: {kind.note}", markup=False, highlight=False)
    printer = Printer(out)
    try:
        if kind.kind == "course":
            from grader.course.grade_course import grade_course  # noqa: PLC0415 - nbformat: a course is graded with it, a class folder without

            run = grade_course(Path(args.directory), args.assignment, request, printer)
        else:
            run = grade_folder(Path(args.directory), request, printer)
    except GradingError as err:
        return error(str(err))
    finally:
        printer.close()
    say_results(out, run)
    printer.summary(run, args.directory)
    return EXIT_PASSED


class Printer:
    """A grading run's events on the terminal: a progress bar (count, ETA, the latest verdict),
    or one plain line per finished task with the time left when the output goes to a file or a
    pipe (a log stays readable); then one summary line."""

    def __init__(self, out):
        self.out, self.bar, self.count, self.total = out, None, 0, 0
        self.verdicts, self.started = Counter(), time.monotonic()

    def not_graded(self, what: str, why: str) -> None:
        self.say(f"not graded: {what} — {why}")

    def not_student(self, name: str, why: str) -> None:
        self.say(f"not a student: {why}")

    def starting(self, heading: str, total: int) -> None:
        self.out.print(heading, markup=False, highlight=False)
        self.total, self.started = total, time.monotonic()
        if self.out.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
            self.bar = Progress(*columns, console=self.out, transient=False)
            self.bar.start()
            self.task = self.bar.add_task("grading", total=total)

    def done(self, task, result) -> None:
        self.count += 1
        verdict = result.verdict if result else "not submitted"
        self.verdicts[verdict] += 1
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=f"{task.student}/{task.exercise}: {verdict}")
            return
        note = f" ({task.note})" if task.note and not result else ""
        self.say(f"[{self.count}/{self.total}] {task.student}/{task.exercise}: {verdict}{note}{self.eta()}")

    def eta(self) -> str:
        """ " · about 2 min left", from the pace so far; "" when done or too early to say."""
        left = self.total - self.count
        if left <= 0 or self.count < 1:
            return ""
        return f" · about {duration((time.monotonic() - self.started) / self.count * left)} left"

    def summary(self, run, directory) -> None:
        """One closing line: verdict counts, the time taken, how many things need a look."""
        counts = ", ".join(f"{n} {v}" for v, n in sorted(self.verdicts.items(), key=lambda item: (-item[1], item[0])))
        look = getattr(run, "needs_look", 0)
        where = f" (zerogpu report {directory})" if look else ""
        self.say(
            f"graded {self.count} in {duration(time.monotonic() - self.started)}"
            + (f": {counts}" if counts else "")
            + f"; {look} need{'s' if look == 1 else ''} a look{where}"
        )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def say(self, text: str) -> None:
        self.out.print(text, markup=False, highlight=False, soft_wrap=True)


def duration(seconds: float) -> str:
    """ "6 min 32 s", "4.2 s"."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def say_results(out, run) -> None:
    """What a finished run did: lost workers, regrades, nbgrader's gradebook, stale feedback,
    speed points nobody could earn without a GPU."""
    for student, exercise_id, note in run.lost:
        out.print(f"note: {student}/{exercise_id} {note}", markup=False, highlight=False)
    for student, exercise_id, lines in run.regraded:
        if len(run.regraded) <= MAX_REGRADE_TABLES:
            show_regrade(out, student, exercise_id, lines)
        else:
            (_, verdict_was, verdict_now), (_, score_was, score_now) = lines[:2]
            out.print(
                f"regraded {student}/{exercise_id}: {verdict_was} {score_was} → {verdict_now} {score_now}",
                markup=False,
                highlight=False,
            )
    if not run.synced:
        out.print(f"done: {run.rows} rows in {run.book}", markup=False, highlight=False)
    for assignment, written, db_url in run.synced:
        out.print(f"{assignment}: {written} grades written to nbgrader's gradebook ({db_url})", markup=False)
    for assignment, students, commands in run.stale:
        out.print(
            f"{assignment}: the feedback of {len(students)} student(s) ({', '.join(students)}) shows "
            "results graded again since; their feedback pages say so. Refresh it, in the course folder: "
            f"{commands}",
            markup=False,
            highlight=False,
        )
    for assignment, speed, total in run.ungraded_speed:
        out.print(
            f"{assignment}: no GPU here, so speed was not graded: nbgrader's max score of {total:g} counts "
            f"{speed:g} speed points nobody could earn (the speed cells say \"needs manual grade\"); grade on "
            "a GPU host, or enter them in formgrader",
            markup=False,
            highlight=False,
        )


MAX_REGRADE_TABLES = 3
"""Regraded rows shown as a table each; past that, one line each."""


def show_regrade(out, student: str, exercise_id: str, lines: list) -> None:
    """The regraded row beside the one it replaced."""
    from rich.table import Table

    table = Table(title=f"{student}/{exercise_id}, regraded on its stored seed", title_justify="left")
    for column in ("", "stored", "regraded"):
        table.add_column(column, overflow="fold")
    for what, old, new in lines:
        table.add_row(what, old, new)
    out.print(table)


def register(sub) -> None:
    grade = sub.add_parser(
        "grade",
        help="grade a class: DIR/<student>/<exercise>.py, or an nbgrader "
        "course folder's submissions (docs/COURSE.md), in graded mode",
    )
    grade.add_argument("directory")
    grade.add_argument(
        "assignment", nargs="?", help="nbgrader course only: the assignment to grade (default: every one)"
    )
    grade.add_argument("--exercises", help="comma-separated ids (default: every id found)")
    grade.add_argument(
        "--workers",
        type=int,
        help="parallel submissions (default: CPU cores, or 6 per GPU sharing its replayer, which times "
        "one at a time); "
        "with --scheduler local, the cluster's workers",
    )
    grade.add_argument(
        "--scheduler",
        metavar="local|tcp://HOST:8786",
        help="grade on a Dask cluster (docs/CLUSTER.md): 'local' starts one on this "
        "machine, an address joins a running scheduler; the gradebook stays here",
    )
    grade.add_argument("--db", help="gradebook SQLite file (default: DIR/gradebook.sqlite)")
    grade.add_argument(
        "--regrade",
        metavar="STUDENT/EXERCISE",
        nargs="+",
        action="extend",
        help="grade these rows again on the inputs they were graded with (their stored seeds), show "
        "the new results beside the stored ones, and mark the rows as regraded; globs match several "
        "('*/vector_add', 'ann/*': quote them)",
    )
    grade.add_argument(
        "--failed",
        action="store_true",
        help="grade every row that did not pass again, on its stored seed (a changed file: on new inputs)",
    )
    grade.add_argument(
        "--kind",
        choices=("class", "course"),
        help="grade DIR as a plain class folder or as an nbgrader course (default: decided by what is there)",
    )
    grade.add_argument(
        "--unsandboxed",
        action="store_true",
        help="grade without bubblewrap (every result says so); see docs/SECURITY.md",
    )
    grade.add_argument(
        "--timeout",
        type=float,
        default=CLASS_CASE_TIMEOUT,
        help=f"seconds per case (default {CLASS_CASE_TIMEOUT:g}: an endless loop costs a worker that long)",
    )
    grade.add_argument(
        "--task-timeout",
        type=float,
        help="seconds one submission may take in all before the grader ends it as "
        "timeout (default: every per-case allowance spent in full)",
    )
    grade.set_defaults(func=cmd_grade)

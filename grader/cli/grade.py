"""`zerogpu grade DIR [ASSIGNMENT]`: a class folder (DIR/<student>/<exercise>.py) or an nbgrader
course's submissions, graded in parallel and resumably. The run is grader/classroom/run.py
`grade_folder` or grader/course/grade_course.py `grade_course`; this prints what it says."""

from __future__ import annotations

from pathlib import Path

from grader.cli.console import EXIT_PASSED, console, error
from grader.course.config import is_course
from grader.settings import CASE_TIMEOUT, CheckOptions


def cmd_grade(args) -> int:
    from grader.classroom.run import GradeRequest, GradingError, grade_folder  # noqa: PLC0415 - the sandbox, child processes and replayers: loaded by `zerogpu grade`, not by every command's start

    request = GradeRequest(
        check=CheckOptions(case_timeout=args.timeout, unsandboxed=args.unsandboxed),
        exercises=tuple(args.exercises.split(",")) if args.exercises else None,
        workers=args.workers,
        scheduler=args.scheduler,
        regrade=args.regrade,
        task_timeout=args.task_timeout,
        db=args.db,
    )
    out = console()
    printer = Printer(out)
    try:
        if is_course(args.directory):
            from grader.course.grade_course import grade_course  # noqa: PLC0415 - nbformat: a course is graded with it, a class folder without

            run = grade_course(Path(args.directory), args.assignment, request, printer)
        else:
            run = grade_folder(Path(args.directory), request, printer)
    except GradingError as err:
        return error(str(err))
    finally:
        printer.close()
    say_results(out, run)
    return EXIT_PASSED


class Printer:
    """A grading run's events on the terminal: a progress bar (count, ETA, the latest verdict),
    or one plain line per finished task when the output goes to a file or a pipe (a log stays
    readable)."""

    def __init__(self, out):
        self.out, self.bar, self.count, self.total = out, None, 0, 0

    def not_graded(self, what: str, why: str) -> None:
        self.say(f"not graded: {what} — {why}")

    def starting(self, heading: str, total: int) -> None:
        self.out.print(heading, markup=False, highlight=False)
        self.total = total
        if self.out.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
            self.bar = Progress(*columns, console=self.out, transient=False)
            self.bar.start()
            self.task = self.bar.add_task("grading", total=total)

    def done(self, task, result) -> None:
        self.count += 1
        verdict = result.verdict if result else "not submitted"
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=f"{task.student}/{task.exercise}: {verdict}")
            return
        note = f" ({task.note})" if task.note and not result else ""
        self.say(f"[{self.count}/{self.total}] {task.student}/{task.exercise}: {verdict}{note}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def say(self, text: str) -> None:
        self.out.print(text, markup=False, highlight=False, soft_wrap=True)


def say_results(out, run) -> None:
    """What a finished run did: lost workers, regrades, nbgrader's gradebook, stale feedback."""
    for student, exercise_id, note in run.lost:
        out.print(f"note: {student}/{exercise_id} {note}", markup=False, highlight=False)
    for student, exercise_id, lines in run.regraded:
        show_regrade(out, student, exercise_id, lines)
    if not run.synced:
        out.print(f"done: {run.rows} rows in {run.book}")
    for assignment, written, db_url in run.synced:
        out.print(f"{assignment}: {written} grades written to nbgrader's gradebook ({db_url})")
    for assignment, students, commands in run.stale:
        out.print(
            f"{assignment}: the feedback of {len(students)} student(s) ({', '.join(students)}) shows "
            "results graded again since; their feedback pages say so. Refresh it, in the course folder: "
            f"{commands}",
            markup=False,
            highlight=False,
        )


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
        help="grade one row again on the inputs it was graded with (its stored seed), show the new "
        "result beside the stored one, and mark the row as regraded",
    )
    grade.add_argument(
        "--unsandboxed",
        action="store_true",
        help="grade without bubblewrap (every result says so); see docs/SECURITY.md",
    )
    grade.add_argument(
        "--timeout", type=float, default=CASE_TIMEOUT, help=f"seconds per case (default {CASE_TIMEOUT:g})"
    )
    grade.add_argument(
        "--task-timeout",
        type=float,
        help="seconds one submission may take in all before the grader ends it as "
        "timeout (default: every per-case allowance spent in full)",
    )
    grade.set_defaults(func=cmd_grade)

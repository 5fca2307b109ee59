"""`zerogpu grade DIR [ASSIGNMENT]`: a class folder (DIR/<student>/<exercise>.py) or an nbgrader
course's submissions, graded in parallel and resumably (grader/classroom/)."""

from __future__ import annotations

from pathlib import Path

from grader.cli.console import EXIT_PASSED, console, error
from grader.paths import gradebook_file


def grading_backend(requested_workers):
    """(back end, worker count) for class grading; a GPU's ceilings are measured first,
    before any worker competes for it."""
    from grader.backend import current
    from grader.classroom.grading import default_workers

    backend = current()
    if backend == "gpu":
        from grader.gpu.ceilings import ceilings

        ceilings()
    return backend, requested_workers or default_workers(backend)


def grade_with_progress(out, todo, grade) -> None:
    """`grade(on_done)` (grading.grade_class or distributed.grade_class_on) with a progress
    bar (count, ETA, the latest verdict) in a terminal; one plain line per finished task when
    the output goes to a file or a pipe (a log stays readable)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    if not out.is_terminal:
        count = [0]

        def line(task, result):
            count[0] += 1
            verdict = result.verdict if result else "not submitted" + (f" ({task.note})" if task.note else "")
            out.print(
                f"[{count[0]}/{len(todo)}] {task.student}/{task.exercise}: {verdict}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )

        grade(line)
        return

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=out, transient=False) as progress:
        bar = progress.add_task("grading", total=len(todo))

        def done(task, result):
            verdict = result.verdict if result else "not submitted"
            progress.update(bar, advance=1, description=f"{task.student}/{task.exercise}: {verdict}")

        grade(done)


def grade_all(out, todo, book, args, private, heading: str, replaying=None) -> None:
    """Grade `todo` here (a pool of worker threads) or, with --scheduler, on a Dask cluster;
    `heading` starts the line that says how many tasks, where, and with how many workers.
    `replaying`: {(student, exercise): stored row} regraded on that row's inputs."""
    options = {
        "case_timeout": args.timeout,
        "private": private,
        "task_timeout": args.task_timeout,
        "unsandboxed": args.unsandboxed,
        "replaying": replaying,
    }
    if not args.scheduler:
        from grader.classroom.grading import grade_class

        backend, workers = grading_backend(args.workers)
        out.print(f"{heading} on the {backend} with {workers} worker(s); results in {book.path}")
        grade_with_progress(
            out, todo, lambda done: grade_class(todo, book, workers=workers, backend=backend, on_done=done, **options)
        )
        return
    from grader.backend import current
    from grader.classroom.distributed import dask_client, grade_class_on, worker_count

    backend = current()
    with dask_client(args.scheduler, args.workers, backend) as client:
        out.print(
            f"{heading} on the Dask cluster at {client.scheduler.address} with "
            f"{worker_count(client)} worker(s) now; results in {book.path}"
        )
        grade_with_progress(
            out, todo, lambda done: grade_class_on(client, todo, book, backend=backend, on_done=done, **options)
        )
    say_lost_workers(out, book, todo)


def say_lost_workers(out, book, todo) -> None:
    """One line for each task of this run that a lost Dask worker had started."""
    from grader.classroom.gradebook import WORKER_LOST

    ran = {(t.student, t.exercise) for t in todo}
    for note in book.notes():
        if note["kind"] == WORKER_LOST and (note["student"], note["about"]) in ran:
            out.print(f"note: {note['student']}/{note['about']} {note['text']}", markup=False, highlight=False)


UNTOUCHED_NOTE = "handed in as given out (the starter, unchanged): counted as not attempted"


def keep_notes(book, tasks, files: dict, prefix: str) -> None:
    """What the results cannot say, into the gradebook's notes: why a task has nothing to
    grade, which autograder cells a hand-in changed, which hand-ins are the untouched starter,
    the files no exercise reads."""
    from grader.classroom.gradebook import AUTOGRADER_CELLS, NOT_GRADED, UNTOUCHED

    book.set_notes(NOT_GRADED, {(t.student, t.exercise): t.note for t in tasks})
    book.set_notes(AUTOGRADER_CELLS, {(t.student, t.exercise): t.autograder_cells for t in tasks})
    book.set_notes(UNTOUCHED, {(t.student, t.exercise): UNTOUCHED_NOTE if t.untouched else "" for t in tasks})
    book.replace_file_notes(prefix, files)


def cmd_grade(args) -> int:
    from grader.containment.sandbox import forced_off, unavailable

    missing = None if args.unsandboxed or forced_off() else unavailable()
    if missing:  # refused before anything runs
        return error(missing)
    from grader.classroom.gradebook import Gradebook
    from grader.classroom.regrade import RegradeError

    class_dir = Path(args.directory)
    if not class_dir.is_dir():
        return error(f"no such folder: {class_dir}")
    course = (class_dir / "nbgrader_config.py").is_file()
    book = Gradebook(gradebook_file(class_dir, args.db))
    try:
        with book.only_run():  # one run per gradebook: a second refuses with one line
            return _cmd_grade_course(args, book) if course else _cmd_grade_folder(args, class_dir, book)
    except RegradeError as err:
        return error(str(err))


def regrading(args, tasks, book) -> tuple[list, dict | None]:
    """With --regrade STUDENT/EXERCISE: ([that task], {its key: its stored row}); else ([], None)."""
    from grader.classroom.regrade import plan

    if not args.regrade:
        return [], None
    task, row = plan(tasks, book, args.regrade)
    return [task], {(task.student, task.exercise): row}


def show_regrade(out, book, replaying: dict) -> None:
    """The regraded row beside the one it replaced."""
    from rich.table import Table

    from grader.classroom.regrade import comparison

    for (student, exercise_id), before in replaying.items():
        table = Table(title=f"{student}/{exercise_id}, regraded on its stored seed", title_justify="left")
        for column in ("", "stored", "regraded"):
            table.add_column(column, overflow="fold")
        for what, old, new in comparison(before, book.row(student, exercise_id)):
            table.add_row(what, old, new)
        out.print(table)


def _cmd_grade_folder(args, class_dir: Path, book) -> int:
    """The `zerogpu grade` command for a plain class folder."""
    from grader.classroom.grading import NOT_THIS_RUN, pending, scan

    exercises = args.exercises.split(",") if args.exercises else None
    found = scan(class_dir, exercises)
    todo, replaying = regrading(args, found.tasks, book)
    todo = todo if replaying else pending(found.tasks, book)
    out = console()
    for student, name, reason in found.strays:
        out.print(f"not graded: {student}/{name} — {reason}", markup=False, highlight=False)
    files = {(student, name): reason for student, name, reason in found.strays if reason != NOT_THIS_RUN}
    keep_notes(book, found.tasks, files, "")
    grade_all(
        out,
        todo,
        book,
        args,
        [class_dir.resolve(), book.path.parent.resolve()],
        f"{len(found.tasks)} tasks, {len(found.tasks) - len(todo)} already graded, {len(todo)} to grade",
        replaying,
    )
    if replaying:
        show_regrade(out, book, replaying)
    out.print(f"done: {len(book.rows())} rows in {book.path}")
    return EXIT_PASSED


def _cmd_grade_course(args, book) -> int:
    """The `zerogpu grade` command for a folder holding nbgrader_config.py."""
    from grader.backend import current
    from grader.classroom.grading import pending
    from grader.course.build import CourseError
    from grader.course.config import tools_on_path
    from grader.course.grading import (
        assignments,
        check_released,
        course_tasks,
        files_not_graded,
        layout,
        load_course,
        regrade_for_speed,
        sync_nbgrader,
    )
    from grader.course.feedback import note_out_of_date

    tools_on_path()
    out = console()
    try:
        course = load_course(Path(args.directory))
        names = [args.assignment] if args.assignment else assignments(course)
        for name in names or [""]:
            if not layout(course, name):
                raise CourseError(
                    f"no assignment {name!r} with exercise cells under {course.source} "
                    f"(there: {', '.join(assignments(course)) or 'none'})"
                )
            check_released(course, name)
    except CourseError as err:
        return error(str(err))
    exercises = args.exercises.split(",") if args.exercises else None
    tasks = []
    for name in names:
        tasks += (found := course_tasks(course, name, exercises))
        strays = files_not_graded(course, name)
        for (student, path), reason in strays.items():
            out.print(f"not graded: {student}/{path} — {reason}", markup=False, highlight=False)
        keep_notes(book, found, strays, f"{name}/")
    on_gpu = current() == "gpu"  # this machine's: a cluster's workers say for themselves
    todo, replaying = regrading(args, tasks, book)
    if not replaying:
        todo = pending(tasks, book) + (regrade_for_speed(tasks, book) if on_gpu else [])
    grade_all(
        out,
        todo,
        book,
        args,
        [course.root, book.path.parent.resolve()],
        f"{', '.join(names)}: {len(tasks)} tasks, {len(tasks) - len(todo)} already graded, {len(todo)} to grade",
        replaying,
    )
    if replaying:
        show_regrade(out, book, replaying)
    rows = {(r["student"], r["exercise"]): r for r in book.rows()}
    for name in names:
        written = sync_nbgrader(course, name, rows)
        out.print(f"{name}: {written} grades written to nbgrader's gradebook ({course.db_url})")
    say_out_of_date(out, note_out_of_date(course, book, names))
    return 0


def say_out_of_date(out, stale: dict) -> None:
    """Which students' feedback shows results graded again since, and what refreshes it."""
    from grader.course.feedback import refresh_commands

    for assignment, students in stale.items():
        only = next(iter(students)) if len(students) == 1 else None
        out.print(
            f"{assignment}: the feedback of {len(students)} student(s) ({', '.join(sorted(students))}) shows "
            "results graded again since; their feedback pages say so. Refresh it, in the course folder: "
            f"{refresh_commands(assignment, only)}",
            markup=False,
            highlight=False,
        )


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
        help="parallel submissions (default: CPU cores, or one per GPU; more on a GPU host share each GPU, "
        "their timed rounds taking turns, faster but with less steady speed figures); "
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
    grade.add_argument("--timeout", type=float, default=60.0, help="seconds per case (default 60)")
    grade.add_argument(
        "--task-timeout",
        type=float,
        help="seconds one submission may take in all before the grader ends it as "
        "timeout (default: every per-case allowance spent in full)",
    )
    grade.set_defaults(func=cmd_grade)

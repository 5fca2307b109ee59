"""`zerogpu`: the command line. Parsing and printing only; the work is in the library."""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from pathlib import Path

EXIT_PASSED, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
PLUGGED_COMMANDS = (
    "grader.commands.course",  # zerogpu course ..., nbgrader
    "grader.commands.report",  # zerogpu report, zerogpu progress
    "grader.commands.doctor",  # zerogpu doctor
    "grader.commands.device",  # zerogpu device
)


def _console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


def cmd_list(args) -> int:
    from rich.table import Table

    from grader import progress
    from grader.exercises import ladder

    done = progress.status()
    table = Table(title="Zero to GPU — the ladder")
    for col in ("stage", "id", "title", "lesson", "status"):
        table.add_column(col)
    styles = {"passed": "green", "attempted": "yellow"}
    for ex in ladder():
        state = done.get(ex.id, "not started")
        table.add_row(str(ex.spec.stage), ex.id, ex.spec.title, ex.spec.lesson,
                      f"[{styles.get(state, 'dim')}]{state}[/]")
    _console().print(table)
    return EXIT_PASSED


def cmd_check(args) -> int:
    from grader import progress
    from grader.check import check_file
    from grader.render import result_rich

    path = Path(args.file)
    if not path.is_file():
        _console(stderr=True).print(f"[red]error:[/] no such file: {path}")
        return EXIT_USAGE
    result = check_file(args.exercise, path, seed=args.seed, case_timeout=args.timeout,
                        graded=args.graded)
    not_recorded = progress.record(result)
    if args.json:
        print(result.to_json())
    else:
        _console().print(result_rich(result))
    if not_recorded:
        _console(stderr=True).print(f"[yellow]warning:[/] {not_recorded}", soft_wrap=True)
    return EXIT_PASSED if result.passed else EXIT_FAILED


def grading_backend(requested_workers):
    """(back end, worker count) for class grading; a GPU's ceilings are measured first,
    before any worker competes for it."""
    from grader.check import current_backend
    from grader.classroom import default_workers

    backend = current_backend()
    if backend == "gpu":
        from grader.device import ceilings

        ceilings()
    return backend, requested_workers or default_workers(backend)


def grade_with_progress(console, todo, book, *, backend, workers, case_timeout, private,
                        task_timeout=None) -> None:
    """grade_class with a progress bar (count, ETA, the latest verdict)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from grader.classroom import grade_class

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=False) as progress:
        bar = progress.add_task("grading", total=len(todo))

        def done(task, result):
            verdict = result.verdict if result else "not submitted"
            progress.update(bar, advance=1, description=f"{task.student}/{task.exercise}: {verdict}")

        grade_class(todo, book, workers=workers, case_timeout=case_timeout, backend=backend,
                    on_done=done, private=private, task_timeout=task_timeout)


def cmd_grade(args) -> int:
    from grader.classroom import discover, pending
    from grader.gradebook import Gradebook

    class_dir = Path(args.directory)
    if not class_dir.is_dir():
        _console(stderr=True).print(f"[red]error:[/] no such folder: {class_dir}")
        return EXIT_USAGE
    if (class_dir / "nbgrader_config.py").is_file():  # an nbgrader course: grader/course_grading.py
        from grader.course_grading import cmd_grade_course

        return cmd_grade_course(args)
    exercises = args.exercises.split(",") if args.exercises else None
    tasks = discover(class_dir, exercises)
    book = Gradebook(Path(args.db) if args.db else class_dir / "gradebook.sqlite")
    todo = pending(tasks, book)
    backend, workers = grading_backend(args.workers)
    console = _console()
    console.print(f"{len(tasks)} tasks, {len(tasks) - len(todo)} already graded, {len(todo)} to grade "
                  f"on the {backend} with {workers} worker(s); results in {book.path}")
    grade_with_progress(console, todo, book, backend=backend, workers=workers, case_timeout=args.timeout,
                        private=[class_dir.resolve(), book.path.parent.resolve()],
                        task_timeout=args.task_timeout)
    console.print(f"done: {len(book.rows())} rows in {book.path}")
    return EXIT_PASSED


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zerogpu", description="Zero to GPU: check Numba CUDA kernels, with or without a GPU.")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("list", help="the exercise ladder and your progress").set_defaults(func=cmd_list)

    check = sub.add_parser("check", help="check a submission file against an exercise")
    check.add_argument("exercise", help="exercise id, e.g. vector_add (see `zerogpu list`)")
    check.add_argument("file", help="your Python file defining launch(...)")
    check.add_argument("--seed", type=int, help="fix the random inputs (the result shows the seed used)")
    check.add_argument("--json", action="store_true", help="print one JSON object instead of a summary")
    check.add_argument("--graded", action="store_true",
                       help="graded mode: mix the grading host's secret into every input")
    check.add_argument("--timeout", type=float, default=60.0,
                       help="seconds allowed per case before the run is stopped (default 60)")
    check.set_defaults(func=cmd_check)

    grade = sub.add_parser("grade", help="grade a class: DIR/<student>/<exercise>.py, or an nbgrader "
                           "course folder's submissions (docs/COURSE.md), in graded mode")
    grade.add_argument("directory")
    grade.add_argument("assignment", nargs="?",
                       help="nbgrader course only: the assignment to grade (default: every one)")
    grade.add_argument("--exercises", help="comma-separated ids (default: every id found)")
    grade.add_argument("--workers", type=int, help="parallel submissions (default: CPU cores, or one per GPU)")
    grade.add_argument("--db", help="gradebook SQLite file (default: DIR/gradebook.sqlite)")
    grade.add_argument("--timeout", type=float, default=60.0, help="seconds per case (default 60)")
    grade.add_argument("--task-timeout", type=float,
                       help="seconds one submission may take in all before the grader ends it as "
                       "timeout (default: every per-case allowance spent in full)")
    grade.set_defaults(func=cmd_grade)

    for name in PLUGGED_COMMANDS:  # each module adds its own subcommand(s)
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name).register(sub)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        import grader  # noqa: F401 - choose the back end before anything imports numba
        from grader.exercises import UnknownExercise
        from grader.paths import DataDirError
    except Exception as exc:  # noqa: BLE001
        _console(stderr=True).print(f"[red]error:[/] cannot start the grader: {exc}")
        return EXIT_USAGE
    try:
        return args.func(args)
    except (UnknownExercise, DataDirError) as exc:  # one line the user can act on, paths unbroken
        _console(stderr=True).print(f"[red]error:[/] {exc}", soft_wrap=True)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

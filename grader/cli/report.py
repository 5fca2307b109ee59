"""`zerogpu report`: the instructor's class report; `zerogpu progress`: a learner's ladder."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from grader.paths import gradebook_file

from grader.cli.console import console as _console, error


def cmd_report(args) -> int:
    import sqlite3

    from grader.course.feedback import before_report
    from grader.report.write import write_report

    if not (args.directory or args.db):
        return error("give a class (or course) folder, or --db PATH")
    db = gradebook_file(args.directory, args.db)
    if not db.is_file():
        hint = f" Grade the class first: zerogpu grade {args.directory}" if args.directory else ""
        return error(f"no gradebook at {db}.{hint}")
    out = Path(args.out) if args.out else db.parent / "report"
    try:
        credit = before_report(args.directory, db)
        written = write_report(db, out, title=args.title, partial_credit=credit)
    except ValueError as exc:
        error(str(exc))
        return 1
    except sqlite3.DatabaseError as exc:  # not a gradebook, or a damaged one
        return error(f"cannot read the gradebook {db}: {exc}; give the right file with --db PATH")
    report = written["report"]
    console = _console()
    median = report.median_percent
    console.print(
        f"{len(report.students)} students, {report.submissions} submissions, median score "
        f"{'–' if median is None else f'{median:.0f}%'}" + (f", hardest: {report.hardest.id}" if report.hardest else "")
    )
    if not report.speed_graded:
        console.print("Speed was not graded: no GPU on the grading host.")
    for key in ("html", "students_csv", "exercises_csv", "submissions_csv"):
        console.print(f"  {written[key]}")
    return 0


def cmd_progress(args) -> int:
    from grader.learner import progress

    if args.reset:
        return _reset_progress(args.yes)
    status = progress.ladder_status()
    step = progress.next_step(status)
    if args.picture:
        from grader.notebook.widgets import progress as ladder_picture

        Path(args.picture).write_bytes(ladder_picture(status).png())
    if args.json:
        print(
            json.dumps(
                {
                    "exercises": status,
                    "next": None
                    if step is None
                    else {
                        "exercise": step.exercise,
                        "state": step.state,
                        "command": step.command,
                        "exercise_file": str(step.exercise_file),
                        "notebook": str(step.notebook) if step.notebook else None,
                    },
                },
                indent=2,
            )
        )
        return 0
    _print_progress(status, step, args.picture)
    return 0


def _reset_progress(yes: bool) -> int:
    from grader.learner import progress
    from grader.paths import DataDirError

    path = progress.progress_file()
    if not path.exists():
        print(f"No progress recorded yet ({path}).")
        return 0
    if not yes:
        if not sys.stdin.isatty():
            print(f"zerogpu progress --reset would delete {path}: add --yes to confirm.", file=sys.stderr)
            return 2
        answer = input(f"Delete every recorded attempt ({path})? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("Kept.")
            return 1
    try:
        progress.reset()
    except DataDirError as err:
        error(str(err))
        return 1
    print(f"Progress reset: {path} deleted.")
    return 0


def _print_progress(status: dict, step, picture: str | None) -> None:
    from rich.table import Table

    from grader.exercises import LADDER
    from grader.learner.progress import ALL_PASS, shown_path

    console = _console()
    passed = sum(entry["status"] == "passed" for entry in status.values())
    table = Table(title=f"Zero to GPU — your progress: {passed} of {len(LADDER)} passed", title_justify="left")
    for column in ("stage", "exercise", "status", "best speed tier", "attempts", "last verdict"):
        table.add_column(column, justify="right" if column in ("stage", "attempts") else "left")
    styles = {"passed": "green", "attempted": "yellow"}
    for stage, exercise_id in enumerate(LADDER):
        entry = status.get(exercise_id)
        state = entry["status"] if entry else "not started"
        marker = " ← next" if step and step.exercise == exercise_id else ""
        table.add_row(
            str(stage),
            exercise_id + marker,
            f"[{styles.get(state, 'dim')}]{state}[/]",
            (entry or {}).get("tier") or "[dim]–[/]",
            str(entry["attempts"]) if entry else "",
            (entry or {}).get("last_verdict") or "",
        )
    console.print(table)
    if not any(entry.get("tier") for entry in status.values()):
        console.print("[dim]Speed tiers are measured on a GPU only; none reached yet.[/]")
    if step is None:
        console.print(f"[bold green]{ALL_PASS}[/]")
    else:
        entry = status.get(step.exercise)
        tried = (
            f" — {entry['attempts']} attempt{'s' if entry['attempts'] != 1 else ''} so far, "
            f"last verdict {entry['last_verdict']}: read the hint in your last result"
            if entry
            else ""
        )
        console.print(f"[bold]Next: {step.exercise}[/] (stage {LADDER.index(step.exercise)}){tried}")
        if step.notebook:
            console.print(f"  open the lesson:  {shown_path(step.notebook)}")
        console.print(f"  or edit {shown_path(step.exercise_file)} and check it:  {step.command}")
    if picture:
        console.print(f"[dim]Ladder picture written to {picture}[/]")


def register(sub) -> None:
    report = sub.add_parser("report", help="class report: report.html (charts, tables) and CSVs from a gradebook")
    report.add_argument(
        "directory", nargs="?", help="class folder (or nbgrader course folder) holding gradebook.sqlite"
    )
    report.add_argument("--db", help="the gradebook SQLite file (default: DIR/gradebook.sqlite)")
    report.add_argument(
        "--out", help="folder for report.html and the CSVs (default: next to the gradebook, in report/)"
    )
    report.add_argument("--title", help="the page title, e.g. the course name and term")
    report.set_defaults(func=cmd_report)

    progress = sub.add_parser(
        "progress",
        help="your ladder: what passes, best speed tiers, what to do next",
        description="Your ladder: what passes, best speed tiers, what to do next. Every check is "
        "recorded in progress.sqlite in the data folder: $ZEROGPU_HOME when set, else "
        "$XDG_DATA_HOME/zerogpu, else ~/.local/share/zerogpu. Set ZEROGPU_HOME (e.g. "
        "to a folder inside this clone) to keep a separate progress per clone.",
    )
    progress.add_argument("--json", action="store_true", help="print one JSON object")
    progress.add_argument(
        "--reset", action="store_true", help="forget every recorded attempt (asks first; --yes does not)"
    )
    progress.add_argument("--yes", action="store_true", help="with --reset: do not ask")
    progress.add_argument("--picture", metavar="PNG", help="also save the ladder as a picture")
    progress.set_defaults(func=cmd_progress)

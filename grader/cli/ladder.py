"""`zerogpu list`: the ladder and the learner's status on each rung; `zerogpu progress`: the
same with speed tiers, attempts and what to do next. The ladder is grader/learner/ladder.py
`my_ladder`; this prints it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from grader.cli.console import EXIT_PASSED, console, error
from grader.learner import progress
from grader.learner.ladder import my_ladder
from grader.learner.progress import ALL_PASS, shown_path

STYLES = {"passed": "green", "attempted": "yellow"}


def _state(state: str) -> str:
    return f"[{STYLES.get(state, 'dim')}]{state}[/]"


LESSON_COLUMN_FROM = 120
"""Terminal width (columns) from which `zerogpu list` also shows what each lesson teaches."""


def cmd_list(args) -> int:
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    out = console()
    standings = my_ladder().standings
    rows = [[str(s.stage), s.exercise, _state(s.state), escape(s.title), escape(s.lesson)] for s in standings]
    columns = ["stage", "id", "status", "title", "lesson"]
    if out.width < LESSON_COLUMN_FROM:
        columns, rows = columns[:-1], [row[:-1] for row in rows]
    # One line per rung, so the whole ladder fits a lab terminal's screen (80 columns, 24
    # rows) with its header in view: the short columns whole, the last one cut to what is left.
    widths = [max(len(col), *(len(Text.from_markup(row[i]).plain) for row in rows)) for i, col in enumerate(columns)]
    left = out.width - (3 * len(columns) + 1) - sum(widths[:-1])  # 3 columns of border and padding each
    widths[-1] = max(min(widths[-1], left), 8)
    table = Table(title="Zero to GPU — the ladder")
    for col, width in zip(columns, widths):
        table.add_column(col, width=width, no_wrap=True, overflow="ellipsis")
    for row in rows:
        table.add_row(*row)
    out.print(table)
    if len(columns) < 5:
        out.print(f"[dim]What each lesson teaches: {LESSON_COLUMN_FROM} columns wide.[/]")
    return EXIT_PASSED


def cmd_progress(args) -> int:
    if args.reset:
        return _reset_progress(args.yes)
    ladder = my_ladder()
    if args.picture:
        from grader.notebook.widgets import progress as ladder_picture  # noqa: PLC0415 - matplotlib: only for --picture

        Path(args.picture).write_bytes(ladder_picture(ladder.status).png())
    if args.json:
        print(json.dumps({"exercises": ladder.status, "next": _next_json(ladder.next)}, indent=2))
    else:
        _print_progress(ladder, args.picture)
    return EXIT_PASSED


def _next_json(step) -> dict | None:
    if step is None:
        return None
    return {
        "exercise": step.exercise,
        "state": step.state,
        "command": step.command,
        "exercise_file": str(step.exercise_file),
        "notebook": str(step.notebook) if step.notebook else None,
    }


def _reset_progress(yes: bool) -> int:
    path = progress.progress_file()
    if not path.exists():
        print(f"No progress recorded yet ({path}).")
        return EXIT_PASSED
    if not yes:
        if not sys.stdin.isatty():
            return error(f"zerogpu progress --reset would delete {path}: add --yes to confirm.")
        answer = input(f"Delete every recorded attempt ({path})? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("Kept.")
            return 1
    progress.reset()  # a refusal is a DataDirError: one line (grader/cli/__init__.py)
    print(f"Progress reset: {path} deleted.")
    return EXIT_PASSED


def _print_progress(ladder, picture: str | None) -> None:
    from rich.table import Table

    out = console()
    total = len(ladder.standings)
    table = Table(title=f"Zero to GPU — your progress: {ladder.passed} of {total} passed", title_justify="left")
    for column in ("stage", "exercise", "status", "best speed tier", "attempts", "last verdict"):
        table.add_column(column, justify="right" if column in ("stage", "attempts") else "left")
    step = ladder.next
    for s in ladder.standings:
        marker = " ← next" if step and step.exercise == s.exercise else ""
        attempts = str(s.attempts) if s.attempts else ""
        table.add_row(
            str(s.stage), s.exercise + marker, _state(s.state), s.tier or "[dim]–[/]", attempts, s.last_verdict or ""
        )
    out.print(table)
    if not any(s.tier for s in ladder.standings):
        out.print("[dim]Speed tiers are measured on a GPU only; none reached yet.[/]")
    if step is None:
        out.print(f"[bold green]{ALL_PASS}[/]")
    else:
        now = next(s for s in ladder.standings if s.exercise == step.exercise)
        tried = (
            f" — {now.attempts} attempt{'s' if now.attempts != 1 else ''} so far, "
            f"last verdict {now.last_verdict}: read the hint in your last result"
            if now.attempts
            else ""
        )
        out.print(f"[bold]Next: {step.exercise}[/] (stage {now.stage}){tried}")
        if step.notebook:
            out.print(f"  open the lesson:  {shown_path(step.notebook)}")
        out.print(f"  or edit {shown_path(step.exercise_file)} and check it:  {step.command}")
    if picture:
        out.print(f"[dim]Ladder picture written to {picture}[/]")


def register(sub) -> None:
    sub.add_parser("list", help="the exercise ladder and your progress").set_defaults(func=cmd_list)
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

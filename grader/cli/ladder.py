"""`zerogpu list`: the ladder and the learner's status on each rung."""

from __future__ import annotations

from grader.cli.console import EXIT_PASSED, console


def cmd_list(args) -> int:
    from rich.table import Table

    from grader.exercises import ladder
    from grader.learner import progress

    done = progress.status()
    table = Table(title="Zero to GPU — the ladder")
    for col in ("stage", "id", "title", "lesson", "status"):
        table.add_column(col)
    styles = {"passed": "green", "attempted": "yellow"}
    for ex in ladder():
        state = done.get(ex.id, "not started")
        table.add_row(
            str(ex.spec.stage), ex.id, ex.spec.title, ex.spec.lesson, f"[{styles.get(state, 'dim')}]{state}[/]"
        )
    console().print(table)
    return EXIT_PASSED


def register(sub) -> None:
    sub.add_parser("list", help="the exercise ladder and your progress").set_defaults(func=cmd_list)

"""`zerogpu check ID FILE`: one submission, one result (exit 0 passed, 1 not yet, 2 usage).
The check and its progress record are grader/learner/attempt.py `attempt`; this prints them.

On stderr, unless --json: first the time limit of each case, then (in a terminal) a status
line that follows the case under way and its seconds, gone when the result prints."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

from grader.cli.console import EXIT_FAILED, EXIT_PASSED, console, error
from grader.render import result_rich
from grader.settings import CASE_TIMEOUT, CheckOptions


def cmd_check(args) -> int:
    from grader.learner.attempt import CannotCheck, attempt  # noqa: PLC0415 - the sandbox: loaded by `zerogpu check`, not by every command's start

    options = CheckOptions(seed=args.seed, case_timeout=args.timeout, graded=args.graded, unsandboxed=args.unsandboxed)
    talk = None if args.json else console(stderr=True)

    def heading(cases: int) -> None:  # the limit first: a learner waiting knows how long it may take
        if talk is not None:
            talk.print(
                f"Checking {args.exercise}: {cases} cases, each may take up to {args.timeout:g} s "
                f"(--timeout to change){', graded' if args.graded else ''}."
            )

    try:
        with talk.status("starting the check") if talk is not None else nullcontext() as status:
            update = status.update if status is not None else None
            done = attempt(args.exercise, Path(args.file), options, starting=heading, progress_line=update)
    except CannotCheck as err:
        return error(str(err))
    if args.json:
        print(done.result.to_json())
    else:
        console().print(result_rich(done.result), soft_wrap=False)  # wrapped inside its panel, not cut off
    if done.not_recorded:
        console(stderr=True).print(f"[yellow]warning:[/] {done.not_recorded}")
    return EXIT_PASSED if done.result.passed else EXIT_FAILED


def register(sub) -> None:
    check = sub.add_parser("check", help="check a submission file against an exercise")
    check.add_argument("exercise", help="exercise id, e.g. vector_add (see `zerogpu list`)")
    check.add_argument("file", help="your Python file defining launch(...)")
    check.add_argument("--seed", type=int, help="fix the random inputs (the result shows the seed used)")
    check.add_argument("--json", action="store_true", help="print one JSON object instead of a summary")
    check.add_argument(
        "--graded", action="store_true", help="graded mode: mix the grading host's secret into every input"
    )
    check.add_argument(
        "--unsandboxed",
        action="store_true",
        help="graded mode without bubblewrap (the result says so); see docs/SECURITY.md",
    )
    check.add_argument(
        "--timeout",
        type=float,
        default=CASE_TIMEOUT,
        help=f"seconds allowed per case before the run is stopped (default {CASE_TIMEOUT:g})",
    )
    check.set_defaults(func=cmd_check)

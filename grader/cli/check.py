"""`zerogpu check ID FILE`: one submission, one result (exit 0 passed, 1 not yet, 2 usage).

On stderr, unless --json: first the time limit of each case, then (in a terminal) a status
line that follows the case under way and its seconds, gone when the result prints."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

from grader.cli.console import EXIT_FAILED, EXIT_PASSED, console, error
from grader.settings import CASE_TIMEOUT, CheckOptions


def cmd_check(args) -> int:
    from grader.checking.pipeline import check_file
    from grader.containment.sandbox import SandboxUnavailable
    from grader.exercises import exercise
    from grader.learner import progress
    from grader.render import result_rich

    path = Path(args.file)
    if not path.is_file():
        return error(f"no such file: {path}")
    options = CheckOptions(seed=args.seed, case_timeout=args.timeout, graded=args.graded, unsandboxed=args.unsandboxed)
    cases = len(exercise(args.exercise).spec.cases) + 1  # the last one again, with fresh inputs
    talk = None if args.json else console(stderr=True)
    if talk is not None:  # the limit first: a learner waiting knows how long it may take
        talk.print(
            f"Checking {args.exercise}: {cases} cases, each may take up to {args.timeout:g} s "
            f"(--timeout to change){', graded' if args.graded else ''}."
        )
    try:
        with talk.status("starting the check") if talk is not None else nullcontext() as status:
            result = check_file(
                args.exercise, path, options=options, progress=status.update if status is not None else None
            )
    except SandboxUnavailable as err:
        return error(str(err))
    not_recorded = progress.record(result)
    if args.json:
        print(result.to_json())
    else:
        console().print(result_rich(result), soft_wrap=False)  # wrapped inside its panel, not cut off
    if not_recorded:
        console(stderr=True).print(f"[yellow]warning:[/] {not_recorded}")
    return EXIT_PASSED if result.passed else EXIT_FAILED


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

"""`zerogpu doctor EXERCISE FILE`: run a submission's cases on the kernel doctor and print what
it found — races, missing atomics, divergent barriers, bad indices, reads of unwritten shared
memory — and how each kernel uses memory (coalescing, bank conflicts), with fixes.

It runs in this process (it is a learner's diagnostic, not a grade): the static policy still
applies, and each case has a time limit (SIGALRM, on the main thread).
"""

from __future__ import annotations

import json
import signal
import threading
from contextlib import contextmanager
from pathlib import Path

EXIT_CLEAN, EXIT_FOUND, EXIT_USAGE = 0, 1, 2


class CaseTimeout(Exception):
    pass


@contextmanager
def time_limit(seconds: float):
    """Raise CaseTimeout in the learner's code after `seconds` (main thread only)."""
    if threading.current_thread() is not threading.main_thread() or not seconds:
        yield
        return

    def expire(signum, frame):
        raise CaseTimeout(f"no result within {seconds:g} s (an endless loop?)")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def diagnose(exercise_id: str, path: Path, seed: int | None = None, timeout: float = 60.0):
    """(case rows, merged DoctorReport) for every case of the exercise; raises
    SubmissionError when the file cannot be loaded."""
    from grader.steps.cases import new_seed, prepare
    from grader.doctor.efficiency import forget
    from grader.doctor.execute import execute_or_simulate
    from grader.doctor.report import merge
    from grader.exercises import exercise
    from grader.steps.judge import judge_case
    from grader.steps.load import load_launch

    ex = exercise(exercise_id)
    seed = new_seed() if seed is None else seed
    launch = load_launch(ex.spec, path.read_bytes(), str(path))
    forget()  # profile the kernels afresh for this report
    rows, reports = [], []
    for p in prepare(ex, seed):
        try:
            with time_limit(timeout):
                outcome = execute_or_simulate(ex.spec, launch, p.inputs, dict(p.case.dims), (str(path),))
        except CaseTimeout as exc:
            rows.append(
                {
                    "name": p.case.name,
                    "dims": dict(p.case.dims),
                    "verdict": "timeout",
                    "message": str(exc),
                    "seconds": timeout,
                }
            )
            break
        result = judge_case(ex.spec, p.case, outcome, p.expected, p.tolerance)
        rows.append(
            {
                "name": p.case.name,
                "dims": dict(p.case.dims),
                "verdict": result.verdict,
                "message": result.message,
                "line": result.line,
                "source": result.source,
                "seconds": round(outcome.seconds, 4),
            }
        )
        reports.append(outcome.report)
    return rows, merge(reports), seed


def cmd_doctor(args) -> int:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from grader.doctor.report import report_rich
    from grader.steps.load import SubmissionError

    console = Console(highlight=False)
    path = Path(args.file)
    if not path.is_file():
        Console(stderr=True).print(f"[red]error:[/] no such file: {path}")
        return EXIT_USAGE
    try:
        rows, report, seed = diagnose(args.exercise, path, args.seed, args.timeout)
    except SubmissionError as err:
        where = f" (line {err.line}: {err.source})" if err.line else ""
        if args.json:
            print(
                json.dumps(
                    {
                        "exercise": args.exercise,
                        "file": str(path),
                        "verdict": err.verdict,
                        "message": err.message + where,
                    }
                )
            )
        else:
            console.print(Text.assemble((f"{err.verdict}: ", "bold red"), err.message + where))
        return EXIT_FOUND
    clean = all(r["verdict"] == "passed" for r in rows) and not (report and report.findings)
    if args.json:
        print(
            json.dumps(
                {
                    "exercise": args.exercise,
                    "file": str(path),
                    "seed": seed,
                    "cases": rows,
                    "report": report.to_dict() if report else None,
                },
                default=str,
            )
        )
        return EXIT_CLEAN if clean else EXIT_FOUND
    console.print(Text.assemble(("zerogpu doctor ", "bold"), (args.exercise, "bold cyan"), f"  {path}  (seed {seed})"))
    table = Table(box=None, pad_edge=False, header_style="dim")
    for col in ("", "case", "sizes", "verdict", "seconds"):
        table.add_column(col)
    for r in rows:
        ok = r["verdict"] == "passed"
        table.add_row(
            Text("ok", "green") if ok else Text("FAIL", "red"),
            Text(r["name"]),
            ", ".join(f"{k}={v}" for k, v in r["dims"].items()),
            r["verdict"],
            f"{r['seconds']:.3f}",
        )
    console.print(table)
    failing = next((r for r in rows if r["verdict"] != "passed"), None)
    if failing and failing.get("message"):
        where = f" (line {failing['line']}: {failing['source']})" if failing.get("line") else ""
        console.print(Text.assemble(("First failure: ", "bold red"), failing["message"] + where))
    if report is not None:
        console.print(report_rich(report))
    return EXIT_CLEAN if clean else EXIT_FOUND


def register(sub) -> None:
    parser = sub.add_parser(
        "doctor",
        help="run a submission on the kernel doctor: races, atomics, barriers, indices, "
        "memory coalescing and bank conflicts, with fixes",
    )
    parser.add_argument("exercise", help="exercise id, e.g. reduce_sum (see `zerogpu list`)")
    parser.add_argument("file", help="your Python file defining launch(...)")
    parser.add_argument("--seed", type=int, help="fix the random inputs")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per case (default 60)")
    parser.set_defaults(func=cmd_doctor)

"""`zerogpu doctor EXERCISE FILE`: run a submission's cases on the kernel doctor and print what
it found — races, missing atomics, divergent barriers, bad indices, reads of unwritten shared
memory — and how each kernel uses memory (coalescing, bank conflicts), with fixes. The cases
run in grader/doctor/checkup.py; this prints them."""

from __future__ import annotations

import json
from pathlib import Path

from grader.doctor.checkup import SubmissionError, run_checkup
from grader.doctor.summary import report_rich
from grader.settings import CASE_TIMEOUT

EXIT_CLEAN, EXIT_FOUND, EXIT_USAGE = 0, 1, 2


def cmd_doctor(args) -> int:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(highlight=False)
    path = Path(args.file)
    if not path.is_file():
        Console(stderr=True).print(f"[red]error:[/] no such file: {path}")
        return EXIT_USAGE
    try:
        rows, report, seed = run_checkup(args.exercise, path, args.seed, args.timeout)
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
    parser.add_argument(
        "--timeout", type=float, default=CASE_TIMEOUT, help=f"seconds per case (default {CASE_TIMEOUT:g})"
    )
    parser.set_defaults(func=cmd_doctor)

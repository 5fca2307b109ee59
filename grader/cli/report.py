"""`zerogpu report`: the instructor's class report. The work is grader/report/write.py
`report_class` (with grader/course/feedback.py `before_report` for an nbgrader course); this
prints what it wrote."""

from __future__ import annotations

from grader.cli.console import EXIT_PASSED, console, error
from grader.course.feedback import before_report


def cmd_report(args) -> int:
    from grader.report.write import ReportError, report_class  # noqa: PLC0415 - matplotlib: loaded by `zerogpu report` only

    try:
        written = report_class(
            args.directory,
            args.db,
            args.out,
            args.title,
            course_setup=before_report,
            names=args.names,
            kind=args.kind,
        )
    except ReportError as exc:
        return error(str(exc))
    except ValueError as exc:  # no rows yet, a course config that cannot be read
        error(str(exc))
        return 1
    report = written["report"]
    out = console()
    median = report.median_percent
    out.print(
        f"{len(report.students)} students, {report.submissions} submissions, median score "
        f"{'–' if median is None else f'{median:.0f}%'}" + (f", hardest: {report.hardest.id}" if report.hardest else "")
    )
    if not report.speed_graded:
        out.print("Speed was not graded: no GPU on the grading host.")
    look = len(report.not_graded) + len(report.not_students) + len(report.files) + len(report.pairs)
    if look:
        out.print(
            f"Needs a look: {look} (hand-ins not graded, entries that are no student, files not graded, "
            f"{len(report.pairs)} pair(s) far more alike than usual)",
            markup=False,
        )
    for key in ("html", "students_csv", "exercises_csv", "submissions_csv", "similarity_csv"):
        out.print(f"  {written[key]}", markup=False, highlight=False)
    if written["feedback"]:
        out.print(f"  {written['feedback'][0].parent}/ ({len(written['feedback'])} feedback pages)", markup=False)
    return EXIT_PASSED


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
    report.add_argument("--names", action="store_true", help="name the students on the leaderboard (hidden by default)")
    report.add_argument(
        "--kind",
        choices=("class", "course"),
        help="read DIR as a plain class folder or an nbgrader course (default: decided by what is there)",
    )
    report.set_defaults(func=cmd_report)

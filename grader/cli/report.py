"""`zerogpu report`: the instructor's class report. The work is grader/report/write.py
`report_class` (with grader/course/feedback.py `before_report` for an nbgrader course); this
prints what it wrote."""

from __future__ import annotations

from grader.cli.console import EXIT_PASSED, console, error
from grader.course.feedback import before_report


def cmd_report(args) -> int:
    from grader.report.write import ReportError, report_class  # noqa: PLC0415 - matplotlib: loaded by `zerogpu report` only

    try:
        written = report_class(args.directory, args.db, args.out, args.title, course_setup=before_report)
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
    for key in ("html", "students_csv", "exercises_csv", "submissions_csv"):
        out.print(f"  {written[key]}")
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
    report.set_defaults(func=cmd_report)

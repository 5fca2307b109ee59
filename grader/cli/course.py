"""`zerogpu course init DIR`: build an nbgrader course from the curriculum (docs/COURSE.md)."""

from __future__ import annotations

from pathlib import Path

from grader.course.config import CONFIG, tools_on_path


def cmd_course_init(args) -> int:
    from rich.console import Console

    from grader.course.build import CourseError, init_course  # noqa: PLC0415 - nbformat: loaded by `zerogpu course` only

    tools_on_path()

    console = Console(highlight=False, soft_wrap=True)
    kept = (Path(args.directory) / CONFIG).exists()
    try:
        made = init_course(
            Path(args.directory),
            args.assignments,
            course_id=args.course_id,
            exchange=Path(args.exchange) if args.exchange else None,
            force=args.force,
        )
    except CourseError as err:
        Console(stderr=True, highlight=False).print(f"[red]error:[/] {err}")
        return 2
    root = Path(args.directory).resolve()
    if kept:
        console.print(f"Kept the existing {root / CONFIG} (and learner config) as they are.")
    for a in made:
        console.print(
            f"  source/{a.name}/  {', '.join(n + '.ipynb' for n in a.notebooks)}  "
            f"[dim]grades {', '.join(a.exercises)}[/]"
        )
    console.print(
        f"Course {args.course_id!r} in {root} ({len(made)} assignments). Next, in that folder:\n"
        f"  nbgrader generate_assignment {made[0].name}   # the learners' version, in release/\n"
        f"  nbgrader release_assignment {made[0].name}    # into the exchange for learners to fetch\n"
        f"  nbgrader collect {made[0].name}; zerogpu grade . {made[0].name}; nbgrader export\n"
        "Learners: learner_nbgrader_config.py goes to their ~/.jupyter/nbgrader_config.py. "
        "See docs/COURSE.md."
    )
    return 0


def register(sub) -> None:
    course = sub.add_parser("course", help="an nbgrader course built from the curriculum")
    actions = course.add_subparsers(dest="course_command", required=True)
    init = actions.add_parser("init", help="write DIR/nbgrader_config.py and DIR/source/<assignment>/")
    init.add_argument("directory", help="the course folder (created if needed)")
    init.add_argument(
        "--assignments",
        nargs="+",
        metavar="[NAME=]IDS",
        help="group exercises: e.g. warmup=thread_ids,vector_add stage2=03,04 "
        "(exercise ids or notebook numbers; default: one assignment per "
        "curriculum notebook with exercises)",
    )
    init.add_argument("--course-id", default="zero-to-gpu", help="nbgrader course id (default zero-to-gpu)")
    init.add_argument(
        "--exchange",
        help="nbgrader exchange folder (default DIR/exchange; on a shared host, a folder every learner can write to)",
    )
    init.add_argument("--force", action="store_true", help="rebuild assignments that already exist")
    init.set_defaults(func=cmd_course_init)

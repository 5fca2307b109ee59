"""`zerogpu lab`: JupyterLab for the course (`make lab`, `make course-lab`). The learner's lab
opens their own copies of the lessons, made or brought up to date first; `--course FOLDER` opens
an nbgrader course's folder with nbgrader on (grader/learner/lab.py). This prints what changed
in the copies, then becomes JupyterLab."""

from __future__ import annotations

import os
from pathlib import Path

from grader.cli.console import console
from grader.learner.lab import LESSONS, course_lab, learner_lab

SAID = {
    "copied": "made your copy of {lesson}",
    "updated": "{lesson}: a new version replaced your copy (you had not changed its code)",
    "offered": "{lesson}: a new version is beside your copy, as {file}: your copy keeps your work; "
    "take what you want from the new one",
}


def cmd_lab(args) -> int:
    if args.course is not None:
        lab = course_lab(Path(args.course).resolve())
    else:
        lab, delivered = learner_lab(Path(args.lessons).resolve())
        out = console()
        for d in delivered:
            out.print(SAID[d.action].format(lesson=d.lesson, file=d.path.name), markup=False)
        out.print(f"Your lessons: {lab.folder} (your own copies: the lab saves your work there)", markup=False)
    command = lab.command + list(args.jupyter)
    os.execvpe(command[0], command, lab.env)
    return 0  # not reached: JupyterLab took over this process


def register(sub) -> None:
    p = sub.add_parser(
        "lab",
        help="open JupyterLab on your copies of the lessons (or, with --course, an nbgrader course)",
        description="JupyterLab on your own copies of the lessons (my-lessons/), or on an nbgrader course with --course.",
    )
    p.add_argument("--lessons", default=str(LESSONS), help="the folder of your copies (default: my-lessons/)")
    p.add_argument(
        "--course", metavar="FOLDER", help="open this folder with nbgrader on (instructors, course learners)"
    )
    p.add_argument("jupyter", nargs="*", help="more options for JupyterLab, after `--` (e.g. -- --port 8899)")
    p.set_defaults(func=cmd_lab)

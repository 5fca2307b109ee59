"""`zerogpu`: the command line. Each command is a module of this package with a
`register(subparsers)`; it parses, calls its one use case below (tests/test_cli.py
`USE_CASES` lists them) and prints what it returns."""

from __future__ import annotations

import argparse
import importlib
import sys

from grader.cli.console import error
from grader.exercises import UnknownExercise
from grader.paths import DataDirError

COMMANDS = (
    "grader.cli.ladder",  # zerogpu list, zerogpu progress
    "grader.cli.check",  # zerogpu check
    "grader.cli.grade",  # zerogpu grade
    "grader.cli.course",  # zerogpu course ..., nbgrader
    "grader.cli.report",  # zerogpu report
    "grader.cli.doctor",  # zerogpu doctor
    "grader.cli.device",  # zerogpu device
    "grader.cli.lab",  # zerogpu lab (make lab, make course-lab)
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zerogpu", description="Zero to GPU: check Numba CUDA kernels, with or without a GPU."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        importlib.import_module(name).register(sub)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (UnknownExercise, DataDirError) as exc:  # one line the user can act on
        return error(str(exc))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

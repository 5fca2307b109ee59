"""`python -m grader.children FOLDER --role ROLE ...`: a child process of the grader.

The grading process starts every child with this command (grader/children/spawn.py): the
limits first (before anything of a submission's can run), the lifeline, then the role's own
module (grader/children/roles/). The child exits without Python's teardown: the simulator's
threads must not delay the exit, and a CUDA context closes with the process.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from grader.children.roles.common import follow_lifeline
from grader.children.roles import ROLES
from grader.containment.guard import apply_limits
from grader.containment.process_cap import limit_own_processes


def arguments(argv: list) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m grader.children", description="A child process of the grader.")
    parser.add_argument("folder", type=Path, help="the task's folder (a replayer's or compiling child's inbox)")
    parser.add_argument("--role", choices=ROLES, default="replay")
    parser.add_argument("--cpu", type=int, help="CPU seconds this process may use")
    parser.add_argument("--address-space", type=int, help="bytes of address space (the simulator's threads)")
    parser.add_argument("--processes", type=int, help="processes at once (inside the sandbox)")
    parser.add_argument("--lifeline", type=int, help="a pipe that reads end-of-file when the grader has gone")
    parser.add_argument("--record-fd", type=int, help="record: the pipe the message goes to")
    parser.add_argument("--where-fd", type=int, help="record: the pipe the lookout speaks on")
    parser.add_argument("--serve-fd", type=int, help="serve, compile: the pipe task names come on")
    parser.add_argument("--ahead", action="store_true", help="record: started before its task exists")
    return parser.parse_args(argv)


def main(argv: list) -> None:
    args = arguments(argv)
    if args.lifeline is not None:
        follow_lifeline(args.lifeline)
    if args.cpu is not None:  # first: nothing of the submission's has run yet
        apply_limits(args.cpu, args.address_space)
    if args.processes is not None:  # inside the sandbox, where the kernel counts its own tasks only
        limit_own_processes(args.processes)
    if args.role == "record":
        from grader.children.roles.record import record_task

        record_task(args.folder, args.record_fd, args.where_fd, args.ahead)
    elif args.role == "serve":
        from grader.children.roles.serve import serve

        serve(args.folder, args.serve_fd)
    elif args.role == "compile":
        from grader.children.roles.serve import serve_compiles

        serve_compiles(args.folder, args.serve_fd)
    elif args.role == "spare":
        from grader.children.roles.spare import wait_then_replay

        wait_then_replay(args.folder)
    else:
        from grader.children.roles.replay import run_task

        run_task(args.folder)


if __name__ == "__main__":
    main(sys.argv[1:])
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown: simulator threads must not delay the exit

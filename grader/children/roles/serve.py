"""The roles kept for a whole grading run on a GPU host, each serving the tasks named on a pipe,
one at a time, each in a folder of its inbox: `serve` (a GPU's replayer, grader/children/
replayers.py) and `compile` (a compiling child, grader/children/compiling.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from grader.backend import current
from grader.children.folder import ANSWERS, ARCH, DONE, REQUESTS, SERVED_ERROR
from grader.children.roles.common import install_guard, private, touch, warm_up_compiler, write_json
from grader.children.roles.replay import run_task
from grader.compiler.client import start_helper
from grader.compiler.prebuilt import arch_of
from grader.exercises import LADDER, exercise
from grader.paths import write_atomically


def _task_folders(inbox: Path, fd: int):
    """The task folders named on `fd`, one per line, until the grading process closes it: only
    names the grading process makes (task_<n>)."""
    with os.fdopen(fd, "r", closefd=True) as names:
        for line in names:
            name = line.strip()
            if name.isidentifier():
                yield inbox / name


def serve(inbox: Path, fd: int) -> None:
    """A replayer that serves one GPU for a whole grading run: each task named on `fd` is run
    as a child of its own would run it, then DONE is left in its folder. What it keeps from one
    task to the next is grader code's alone: the reference kernels compiled once, the benchmark
    inputs and the buffers they are timed in (grader/gpu/arena.py). No code of a submission's
    runs here on the host: on a GPU its kernels run on the device."""
    from grader.gpu.harness import settle

    specs = [exercise(exercise_id).spec for exercise_id in LADDER]  # read before the guard hides them
    if current() == "gpu":  # the benchmark's buffers first, at the same places in every replayer
        from grader.gpu.arena import SCRATCH_BYTES, arena_bytes, reserve

        reserve(max(arena_bytes(spec) for spec in specs if spec.benchmark) + SCRATCH_BYTES)
        _say_arch(inbox)
    guard = install_guard(private(None, {}), inbox, install=False)
    start_helper()
    guard.install()
    for folder in _task_folders(inbox, fd):
        try:
            run_task(folder, served=True)
        except Exception as exc:  # noqa: BLE001 - this task's failure, said to its parent
            write_json(folder / SERVED_ERROR, {"error": f"{type(exc).__name__}: {exc}"[:2000]})
        settle()  # no launch of this task's runs on into the next
        touch(folder / DONE)


def _say_arch(inbox: Path) -> None:
    """ARCH in the inbox: what the grading process has kernels compiled for from now on."""
    from numba import cuda

    write_atomically(inbox / ARCH, json.dumps(list(arch_of(cuda.get_current_device().compute_capability))))


def serve_compiles(inbox: Path, fd: int) -> None:
    """A compiling child: for each task named on `fd`, it compiles the kernels its requests.json
    describes (grader/compiler/server.py `compile_request`), leaving answers.json, then DONE. It
    holds no input, no secret and no GPU: like the replayer, it builds each kernel from its `def`
    and never runs it."""
    from grader.compiler.server import compile_request
    from grader.replay.references import references_compiled

    warm_up_compiler()
    for exercise_id in LADDER:  # the references, read before the guard hides kernels/
        exercise(exercise_id)
    install_guard(private(None, {}), inbox)
    for folder in _task_folders(inbox, fd):
        answers = []
        try:
            for request in json.loads((folder / REQUESTS).read_text()):
                if "references" in request:  # an exercise's baseline and target
                    kernels = references_compiled(str(request["references"]), tuple(request["cc"]))
                    answers.append({"status": "ok", "kernels": kernels})
                else:
                    answers.append(compile_request(request))
        except Exception as exc:  # noqa: BLE001 - the replayer compiles what this could not
            answers.append({"status": "unchecked", "why": f"{type(exc).__name__}: {exc}"[:2000]})
        write_json(folder / ANSWERS, {"answers": answers})
        touch(folder / DONE)

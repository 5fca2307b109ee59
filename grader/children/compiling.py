"""Compile a check's kernels ahead, on every core, while a GPU's replayer is busy with others.

A GPU's replayer replays one check at a time, and most of a check's correctness phase there
was numba-cuda compiling the submission's kernels: typing, lowering and NVVM, CPU work that
held the GPU's queue (docs/BENCHMARKS.md, "Class pace"). Class grading now has each check's
kernels compiled first by a compiling child (grader/children/roles/serve.py `serve_compiles`): a
process kept for the run that builds each kernel from its `def`, as the replayer does, and
answers with its cubin for the argument types the plans launch it with (grader/replay/
signatures.py). The replayer loads it (grader/compiler/prebuilt.py). A compiling child holds
no input, no secret and no GPU; what it answers is a kernel the submission wrote, for the
types the grading process asked for. No answer in time, or one the replayer cannot use, and
the replayer compiles the kernel itself, as before.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from pathlib import Path

from grader.children.folder import ANSWERS, DONE, REQUESTS
from grader.children.spawn import contained, start_serving, stop_serving
from grader.compiler.client import compute_capability
from grader.compiler.prebuilt import arch_of
from grader.containment import scratch
from grader.paths import read_json
from grader.replay.signatures import launch_types
from grader.steps.cases import RERUN_STRIDE

COMPILER_CPU_SECONDS = 7 * 24 * 3600
"""A compiling child's CPU limit for its whole life (each task's wall clock is watched here)."""
MAX_ANSWER_BYTES = 64 << 20
"""The most read back from one task's answers."""
MAX_CODE_CHARS = 16 << 20
"""The most cubin (base64) kept for one kernel."""


class Compiler:
    """One compiling child, started on first use and again after it was stopped."""

    def __init__(self, sandboxed: bool, private: tuple):
        self.sandboxed, self.private = sandboxed, private
        self.proc = None
        self._inbox = None
        self._names = None
        self._count = itertools.count()

    def _start(self) -> None:
        contain = contained(None, self.private) if self.sandboxed else None
        # it compiles for the device it is told; it never opens one
        self._inbox, self.proc, self._names = start_serving(
            "zerogpu-compiler-",
            "gpu",
            None,
            COMPILER_CPU_SECONDS,
            contain,
            role="compile",
            env={"CUDA_VISIBLE_DEVICES": ""},
        )

    def stop(self) -> None:
        proc, names, inbox = self.proc, self._names, self._inbox
        self.proc = self._names = self._inbox = None
        stop_serving(proc, names, inbox)

    def answers(self, requests: list, timeout: float) -> list | None:
        """The child's answer to each request, in order; None when it gave none in `timeout`
        seconds (it is stopped then: the next task starts a new one)."""
        if self.proc is None or self.proc.poll() is not None:
            self.stop()
            self._start()
        task_dir = Path(self._inbox.name) / f"task_{next(self._count)}"
        task_dir.mkdir()
        try:
            (task_dir / REQUESTS).write_text(json.dumps(requests))
            self._names.write(task_dir.name + "\n")
            deadline = time.monotonic() + timeout
            while not (task_dir / DONE).exists():
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.stop()
                    return None
                time.sleep(0.002)
            said = read_json(task_dir / ANSWERS, MAX_ANSWER_BYTES)
            if not isinstance(said, dict):  # too long or not JSON: a child not to ask again
                self.stop()
                return None
            answers = said.get("answers")
            return answers if isinstance(answers, list) and len(answers) == len(requests) else None
        except (OSError, ValueError, AttributeError):
            self.stop()
            return None
        finally:
            if self._inbox is not None:
                scratch.remove_tree(task_dir)


class Compilers:
    """The compiling children of a grading run: one per check compiling at once, kept."""

    def __init__(self):
        self._idle: list = []
        self._all: list = []
        self._lock = threading.Lock()

    def take(self, sandboxed: bool, private: tuple) -> Compiler:
        with self._lock:
            for k, compiler in enumerate(self._idle):
                if (compiler.sandboxed, compiler.private) == (sandboxed, private):
                    return self._idle.pop(k)
            compiler = Compiler(sandboxed, private)
            self._all.append(compiler)
            return compiler

    def give_back(self, compiler: Compiler) -> None:
        with self._lock:
            self._idle.append(compiler)

    def stop(self) -> None:
        with self._lock:
            every, self._all, self._idle = self._all, [], []
        for compiler in every:
            compiler.stop()


def requests_for(spec, message, cases: list, timed: bool, arch: tuple) -> tuple[list, list]:
    """(requests for the compiling child, kernel key of each): every kernel of the plans the
    replayer will run, once per argument types it is launched with."""
    dims_of = {str(p.index % RERUN_STRIDE): dict(p.case.dims) for p in cases}
    if timed and spec.benchmark is not None:
        dims_of["bench"] = dict(spec.benchmark.dims)
    wanted: dict = {}
    for key, dims in dims_of.items():
        plan = message.plans.get(key)
        if plan is None or not hasattr(plan, "steps"):
            continue
        for kernel, types in launch_types(plan, spec, dims).items():
            for args in types:
                if kernel in message.kernels and args not in wanted.setdefault(kernel, []):
                    wanted[kernel].append(args)
    requests, kernels = [], []
    for kernel, types in wanted.items():
        for args in types:
            requests.append({"kernel": message.kernels[kernel], "args": args, "cc": list(arch), "ahead": True})
            kernels.append(kernel)
    return requests, kernels


def compiled_ahead(compilers: Compilers, task, arch) -> dict:
    """kernel key -> [{"args", "arch", "cubin", "entry", "links"}]: the kernels of `task`
    (grader/children/task.py) compiled by a compiling child, for the replayer to load
    (grader/compiler/prebuilt.py); {} when there is nothing to compile or no answer came."""
    timed = task.timing is not None
    requests, kernels = requests_for(task.exercise.spec, task.message, task.cases, timed, tuple(arch))
    if not requests:
        return {}
    compiler = compilers.take(task.sandboxed, tuple(str(p) for p in task.private))
    try:
        answers = compiler.answers(requests, task.case_timeout)
    except Exception:  # noqa: BLE001 - no compiling child could start: the replayer compiles
        answers = None
    finally:
        compilers.give_back(compiler)
    compiled: dict = {}
    for request, kernel, answer in zip(requests, kernels, answers or []):
        if _well_formed(answer):  # the replayer checks the rest (grader/compiler/prebuilt.py `usable`)
            kept = {"args": request["args"], "arch": request["cc"]}
            compiled.setdefault(kernel, []).append({**kept, **{k: answer[k] for k in ("cubin", "entry", "links")}})
    return compiled


def _well_formed(answer) -> bool:
    return isinstance(answer, dict) and answer.get("status") == "ok" and _code(answer)


def _code(answer: dict) -> bool:
    return (
        isinstance(answer.get("cubin"), str)
        and len(answer["cubin"]) <= MAX_CODE_CHARS
        and isinstance(answer.get("entry"), str)
        and len(answer["entry"]) <= 4096
        and isinstance(answer.get("links"), bool)
    )


def references_ahead(compiler: Compiler, exercise_id: str, arch: tuple, timeout: float) -> list | None:
    """An exercise's baseline and target kernels compiled by `compiler` (grader/replay/
    references.py): [{"module", "name", "args", "cubin", "entry", "links", "arch"}], or None."""
    answers = compiler.answers([{"references": exercise_id, "cc": list(arch)}], timeout)
    kernels = answers[0].get("kernels") if answers and isinstance(answers[0], dict) else None
    if not isinstance(kernels, list):
        return None
    return [
        {k: entry[k] for k in ("module", "name", "args", "cubin", "entry", "links", "arch")}
        for entry in kernels
        if isinstance(entry, dict)
        and _code(entry)
        and isinstance(entry.get("module"), str)
        and isinstance(entry.get("name"), str)
        and isinstance(entry.get("args"), list)
        and isinstance(entry.get("arch"), list)
    ]


def default_arch() -> tuple:
    """The target to compile for before a replayer has said its device's (grader/compiler/client.py)."""
    return arch_of(compute_capability())

"""Compile before running: every kernel a CPU engine launches is first compiled by Numba's real
CUDA compiler for that launch's argument types (grader/compiler/server.py, in a process of
its own), so a kernel a GPU would refuse is refused on a laptop too.

`verify_launch(py_func, args, signatures)` is what the kernel doctor and the simulator call
before a launch runs. Answers are cached on disk by a hash of the kernel's description (its
source, the globals it reads), the argument types, the compute capability and numba-cuda's
version, and in memory for the process, so a second check of the same file compiles nothing. A
grading child starts the helper before it installs its guard (`start_helper`); the helper
imports numba only when the cache misses.

It fails closed: a kernel the check cannot verify never runs. What the learner can change (a
list global, a lambda kernel, a default argument) is an `exception` saying what to write
instead; what is the grader's own failure (the helper not answering, compiler libraries
missing) is `crashed`, said to be the grader's fault.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from dataclasses import dataclass

from grader import settings
from grader.paths import compile_cache_dir
from grader.compiler.describe import describe_argument, describe_function, numba_cuda_version
from grader.compiler.dispatch import converted, matching_signature, no_matching_definition, signature_types

DEFAULT_CC = (9, 0)
"""sm_90 (H100/H200) unless ZEROGPU_COMPUTE_CAPABILITY names the course's GPU ("8.6")."""
ANSWER_TIMEOUT = 120.0
SERVER = Path(__file__).with_name("server.py")


class CompileRefused(Exception):
    """Numba's CUDA compiler refused a kernel: carries the learner's ErrorInfo."""

    def __init__(self, info):
        super().__init__(info.message)
        self.info = self.learner_info = info  # explain_exception passes it on as it is


REPORT = (
    "This is the grader's failure, not your code's: please report it to your course staff "
    "(or as an issue of the Zero to GPU project) with your file and this message."
)


class CompileCheckFailed(RuntimeError):
    """The compile check itself failed (the grader's fault): `crashed`, and the kernel never runs."""

    learner_verdict = "crashed"

    def __init__(self, name: str, answer: dict):
        super().__init__(
            f"The grader could not check your kernel `{name}` with Numba's CUDA compiler "
            f"({answer.get('why', 'no answer')}), so it did not run it. {REPORT}"
        )
        self.learner_hint = answer.get("fix", "")


@dataclass(frozen=True)
class Verified:
    """A launch the compile check accepted: its arguments as the kernel receives them (numbers
    cast to a declared signature's types) and its static shared memory in bytes."""

    args: tuple
    shared_bytes: int = 0


def enabled() -> bool:
    """On a CPU engine, always: no Python a GPU would refuse runs anywhere (there is no switch)."""
    from numba import config

    return bool(config.ENABLE_CUDASIM)


def compute_capability() -> tuple[int, int]:
    text = settings.compute_capability()
    try:
        major, minor = text.split(".", 1) if "." in text else (text[:-1], text[-1:])
        return int(major), int(minor)
    except ValueError:  # unset or unreadable: the default GPU
        return DEFAULT_CC


def cache_dir() -> Path:
    return compile_cache_dir()


class _Helper:
    """The compile helper process, started once per process and fed one request at a time."""

    def __init__(self):
        self.proc: subprocess.Popen | None = None
        self.lock = threading.Lock()

    def start(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            return
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
        env["ZEROGPU_BACKEND"] = "gpu"
        self.proc = subprocess.Popen(
            [sys.executable, str(SERVER), str(cache_dir())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
        )

    def ask(self, request: dict) -> dict:
        with self.lock:
            self.start()
            proc = self.proc
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
            answer: list = []
            reader = threading.Thread(target=lambda: answer.append(proc.stdout.readline()), daemon=True)
            reader.start()
            reader.join(ANSWER_TIMEOUT)
            if not answer or not answer[0]:
                return {"status": "unchecked", "why": "the compile helper did not answer"}
            return json.loads(answer[0])


HELPER = _Helper()
_MEMO: dict = {}


def start_helper() -> None:
    """Start the helper now (a grading child, before its guard forbids new processes)."""
    if enabled():
        try:
            HELPER.start()
        except OSError:
            pass  # then every kernel stays unchecked


def _without_paths(value):
    if isinstance(value, dict):
        return {k: _without_paths(v) for k, v in value.items() if k != "filename"}
    if isinstance(value, list):
        return [_without_paths(v) for v in value]
    return value


def request_for(py_func, args, arg_types=None) -> dict:
    request = {
        "kernel": describe_function(py_func),
        "args": [describe_argument(a) for a in args] if arg_types is None else list(arg_types),
        "cc": list(compute_capability()),
        "numba_cuda": numba_cuda_version(),
    }
    # The answer depends on the text, its line numbers and the types, not on where the file
    # lies: every student's copy of one kernel, each notebook check's fresh file, share it.
    request["key"] = hashlib.sha256(json.dumps(_without_paths(request), sort_keys=True).encode()).hexdigest()
    return request


def compile_answer(py_func, args, arg_types=None) -> dict:
    """The compiler's answer for this kernel and these arguments (or argument types; cached)."""
    try:
        request = request_for(py_func, args, arg_types)
    except (OSError, TypeError) as exc:  # no source to read: nothing to compile from
        return {"status": "unchecked", "why": f"the kernel's source cannot be read ({exc})"}
    key = request["key"]
    if key in _MEMO:
        return _MEMO[key]
    path = cache_dir() / f"{key}.json"
    try:
        answer = json.loads(path.read_text())
    except (OSError, ValueError):
        try:
            answer = HELPER.ask(request)
        except (OSError, ValueError) as exc:
            answer = {"status": "unchecked", "why": f"the compile helper failed ({exc})"}
    _MEMO[key] = answer
    return answer


def verify_launch(py_func, args, signatures=()) -> Verified:
    """Refuse what a GPU would not run: arguments that fit none of the kernel's declared
    signatures (numba-cuda's TypeError), a kernel Numba's CUDA compiler refuses (CompileRefused)
    or that cannot be verified (CompileRefused, or CompileCheckFailed when that is the
    grader's fault). `signatures`: the declared argument types, as numba types."""
    args = tuple(args)
    arg_types = [describe_argument(a) for a in args]
    if signatures:
        declared = [signature_types(s) for s in signatures]
        chosen = matching_signature(declared, arg_types)
        if chosen is None:
            raise no_matching_definition(py_func.__name__, declared, arg_types)
        args, arg_types = converted(args, chosen), list(chosen)
    if not enabled():
        return Verified(args)
    answer = compile_answer(py_func, args, arg_types)
    status = answer.get("status")
    if status == "ok":
        return Verified(args, int(answer.get("shared_bytes", 0)))
    from grader.compiler.teach import refusal, unverifiable  # noqa: PLC0415 - only for a refused kernel; out of `import grader`

    if status == "error":
        raise CompileRefused(refusal(py_func, answer))
    if status == "unverifiable":
        raise CompileRefused(unverifiable(py_func, answer))
    raise CompileCheckFailed(py_func.__name__, answer)

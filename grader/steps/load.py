"""Source text -> the learner's `launch`, with every failure turned into a verdict."""

from __future__ import annotations

import inspect
import io
import linecache
import tokenize

from grader.steps.explain import explain_exception
from grader.containment.policy import TOO_DEEP, shape_problems, violations
from grader.authoring.spec import Spec


class SubmissionError(Exception):
    """The submission cannot be run at all; carries the verdict and a learner message."""

    def __init__(self, verdict: str, message: str, line: int | None = None, source: str = ""):
        super().__init__(message)
        self.verdict, self.message, self.line, self.source = verdict, message, line, source


def decoded(source: str | bytes) -> str:
    """A file's bytes as Python reads them (UTF-8 unless a `# coding:` line says otherwise); a
    byte that is not valid text is a `syntax_error` naming its line and byte, as Python's own
    `SyntaxError: (unicode error)` does, never a crash."""
    if isinstance(source, str):
        return source
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    except SyntaxError:  # the first lines do not decode: find where, as UTF-8
        encoding = "utf-8"
    try:
        return source.decode(encoding)
    except UnicodeDecodeError as exc:
        start = exc.start
        line = source.count(b"\n", 0, start) + 1
        column = start - (source.rfind(b"\n", 0, start) + 1) + 1
        text = source.splitlines()[line - 1].decode(encoding, errors="replace").strip()
        message = (
            f"Python cannot read your file: it is not valid {exc.encoding.upper()} at line {line}, byte {column} "
            f"(0x{source[start]:02x}). Save the file as UTF-8 (your editor's encoding setting), or "
            "remove that character."
        )
        raise SubmissionError("syntax_error", message, line, text) from None


def enforce_policy(source: str, allowed_imports, allowed_library_calls=()) -> None:
    """Refuse, before anything runs, a file that breaks the policy (grader/containment/policy.py)."""
    found = violations(source, allowed_imports, allowed_library_calls)
    if found:
        first = found[0]
        lines = source.splitlines()
        text = lines[first.line - 1].strip() if 0 < first.line <= len(lines) else ""
        more = f" ({len(found) - 1} more like it)" if len(found) > 1 else ""
        raise SubmissionError("forbidden", f"Not allowed: {first.message}{more}.", first.line, text)


def checked_text(source: str | bytes, filename: str, allowed_imports=None, allowed_library_calls=()) -> str:
    """The submission's text, refused before anything runs when Python cannot read it, when it
    breaks the policy (when `allowed_imports` is given) or has a shape no kernel file has."""
    source = decoded(source)
    try:
        compile(source, filename, "exec")
    except SyntaxError as exc:
        text = (exc.text or "").rstrip()
        message = f"Python cannot read line {exc.lineno}: {exc.msg}."
        raise SubmissionError("syntax_error", message, exc.lineno, text.strip()) from None
    except (RecursionError, MemoryError):  # the compiler recurses too: refused, never a crash
        raise SubmissionError("forbidden", f"Not allowed: {TOO_DEEP}.", 1, "") from None
    if allowed_imports is not None:
        enforce_policy(source, allowed_imports, allowed_library_calls)
    problems = shape_problems(source)
    if problems:
        first = problems[0]
        text = source.splitlines()[first.line - 1].strip()
        raise SubmissionError("exception", first.message + ".", first.line, text)
    return source


def load_namespace(source: str | bytes, filename: str, allowed_imports=None, allowed_library_calls=()) -> dict:
    """Execute the submission's source (text, or the file's bytes) in a fresh namespace (after
    the policy check, when `allowed_imports` is given)."""
    source = checked_text(source, filename, allowed_imports, allowed_library_calls)
    code = compile(source, filename, "exec")
    # Keep the source findable for tracebacks and numba even when it is not on disk.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": "submission", "__file__": filename}
    try:
        exec(code, namespace)  # noqa: S102 - running the learner's code is the point
    except BaseException as exc:  # noqa: BLE001
        if isinstance(exc, KeyboardInterrupt):
            raise
        info = explain_exception(exc, (filename,))
        message = f"Running your file failed before any test: {info.message}"
        raise SubmissionError("exception", message, info.line, info.source) from None
    return namespace


def check_signature(spec: Spec, launch) -> None:
    if not callable(launch):
        raise SubmissionError("exception", "`launch` must be a function.")
    expected = spec.param_names
    try:
        params = inspect.signature(launch).parameters
    except (TypeError, ValueError):
        return
    names = tuple(params)
    if set(names) != set(expected):
        raise SubmissionError(
            "exception",
            f"`launch` must take the parameters ({', '.join(expected)}); yours takes "
            f"({', '.join(names)}). The grader passes them by these names.",
        )


def load_launch(spec: Spec, source: str | bytes, filename: str, policy: bool = True):
    namespace = load_namespace(
        source, filename, spec.allowed_imports if policy else None, getattr(spec, "allowed_library_calls", ())
    )
    launch = namespace.get("launch")
    if launch is None:
        raise SubmissionError(
            "exception",
            f"Your file defines no `launch` function; it must define launch({', '.join(spec.param_names)}).",
        )
    check_signature(spec, launch)
    return launch

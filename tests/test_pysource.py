"""Python source parsed from several threads at once (grading a class with worker threads)."""

import ast
import gc
import pathlib
import sys
import threading

import pytest

from grader import pysource

GRADER = pathlib.Path(__file__).resolve().parent.parent / "grader"
SOURCE = "\n".join(
    f"def f{i}(a):\n    return ((a + 1) * (a - {i})) if a else [x for x in range(a)]" for i in range(200)
)


def _errors_parsing_in_threads(parse, threads=4, rounds=30):
    """SystemErrors seen while `threads` threads parse at once, with collections (whose callbacks
    run Python, so the interpreter may switch threads) happening inside the parser."""
    errors = []

    def callback(phase, info):
        sum(range(50))

    def work():
        for _ in range(rounds):
            try:
                parse(SOURCE)
            except SystemError as e:
                errors.append(str(e))

    interval, threshold = sys.getswitchinterval(), gc.get_threshold()
    sys.setswitchinterval(1e-6)
    gc.set_threshold(10)
    gc.callbacks.append(callback)
    try:
        workers = [threading.Thread(target=work) for _ in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    finally:
        gc.callbacks.remove(callback)
        gc.set_threshold(*threshold)
        sys.setswitchinterval(interval)
    return errors


def test_parsing_in_several_threads_at_once_never_fails():
    """On CPython 3.11 plain `ast.parse` from 4 threads raises 'AST constructor recursion depth
    mismatch' now and then (it crashed a correct hand-in); the grader's parse never does."""
    if not any(_errors_parsing_in_threads(ast.parse) for _ in range(3)):
        pytest.skip("this Python parses safely from several threads; nothing to guard against")
    assert _errors_parsing_in_threads(pysource.parse) == []


def _names_text(arg):
    """Whether literal_eval's argument is text (a parse inside), not a syntax tree already made."""
    return isinstance(arg, ast.Constant) or getattr(arg, "id", "") in {"text", "source", "string"}


def test_the_grader_parses_only_through_the_lock():
    """A new `ast.parse` (or `ast.literal_eval` of text, which parses) elsewhere in grader/ would
    bring the crash back."""
    direct = []
    for path in GRADER.rglob("*.py"):
        if path.name == "pysource.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            f = getattr(node, "func", None)
            if not (isinstance(f, ast.Attribute) and getattr(f.value, "id", "") == "ast"):
                continue
            text = node.args and not isinstance(node.args[0], ast.Call)  # literal_eval(parse(...)) is fine
            if f.attr == "parse" or (f.attr == "literal_eval" and text and _names_text(node.args[0])):
                direct.append(f"{path.relative_to(GRADER)}:{node.lineno}")
    assert direct == []

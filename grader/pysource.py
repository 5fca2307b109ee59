"""Python source parsed to a syntax tree, and a tree compiled, safely from several threads.

CPython 3.11 keeps one recursion counter per interpreter while it turns source into `ast`
objects (and while it checks a tree handed to `compile`). Two threads in there at once, one
paused by a garbage collection, leave it unbalanced: `SystemError: AST constructor recursion
depth mismatch`, a crashed check for a correct kernel (seen grading a class with 4 worker
threads). Every parse and tree compile in the grader goes through this lock.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(source: str, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """`ast.parse`, one thread at a time."""
    with _LOCK:
        return ast.parse(source, filename, mode)


def compile_tree(tree: ast.AST, filename: str, mode: str = "exec"):
    """`compile` of a syntax tree, one thread at a time."""
    with _LOCK:
        return compile(tree, filename, mode)

"""Solution regions for nbgrader, derived from an exercise's starter and its solution.

nbgrader's ClearSolutions replaces every `### BEGIN SOLUTION` … `### END SOLUTION` region of
an answer cell by a code stub. We build the instructor's cell from the two files we already
have: where the solution differs from the starter (difflib, over logical lines so a
multi-line statement is never cut in two), the solution's lines go inside a region and the
starter's lines stay just above it. So the released cell is the starter, each change point
followed by the stub, and the instructor's cell runs the solution:

- starter lines that are comments, `pass`, or plain assignments the solution overwrites (or
  never reads) stay as they are: `blocks = 1  # TODO: …` is still there for the learner;
- any other starter statement (a store into an array, an `if` block) is commented out, since
  it would run before the solution in the instructor's cell.

`released(annotate(starter, solution), stub)` must compile; grader/course/build.py checks that with
nbgrader's own ClearSolutions for every exercise it puts in a course.
"""

from __future__ import annotations

import ast
import difflib
import io
import re
import textwrap
import tokenize
from grader import pysource

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
STUB = "pass  # YOUR CODE HERE"
"""The code stub: a statement, so the released cell still parses and runs."""

PURE_CALLS = frozenset(
    {
        "cuda.grid",
        "cuda.gridsize",
        "cuda.shared.array",
        "cuda.local.array",
        "float32",
        "float64",
        "int32",
        "int64",
        "uint8",
        "np.float32",
        "np.float64",
        "np.int32",
        "range",
        "min",
        "max",
        "abs",
        "len",
        "int",
        "float",
    }
)
"""Calls a kept starter assignment may make: no side effects, no array reads."""


def logical_units(text: str) -> list[list[str]]:
    """The text's physical lines grouped into logical lines (a statement spread over several
    lines, a docstring); each comment-only or blank line is a unit of its own."""
    lines = text.splitlines()
    units, start, depth = [], 1, 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.OP and tok.string in "([{":
                depth += 1
            elif tok.type == tokenize.OP and tok.string in ")]}":
                depth -= 1
            elif tok.type == tokenize.NEWLINE or (tok.type == tokenize.NL and depth == 0):
                end = tok.start[0]
                if end >= start:
                    units.append(lines[start - 1 : end])
                    start = end + 1
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [[line] for line in lines]
    units.extend([line] for line in lines[start - 1 :])
    return units


def _is_code(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _indent(line: str) -> str:
    return re.match(r"\s*", line).group(0)


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return "?"


def _pure(value: ast.AST) -> bool:
    for node in ast.walk(value):
        if isinstance(
            node,
            (
                ast.Subscript,
                ast.NamedExpr,
                ast.Lambda,
                ast.Await,
                ast.Yield,
                ast.YieldFrom,
                ast.ListComp,
                ast.SetComp,
                ast.DictComp,
                ast.GeneratorExp,
            ),
        ):
            return False
        if isinstance(node, ast.Call) and _dotted(node.func) not in PURE_CALLS:
            return False
    return True


def _targets(stmt: ast.Assign) -> list[str] | None:
    names = []
    for target in stmt.targets:
        parts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        if not all(isinstance(p, ast.Name) for p in parts):
            return None
        names += [p.id for p in parts]
    return names


def _first_use(block: list[ast.stmt]) -> dict[str, str]:
    """Name -> "store" or "load": what the block does to it first, in execution order."""
    first: dict[str, str] = {}

    def see(node, how=None):
        if isinstance(node, ast.Name):
            first.setdefault(node.id, how or ("store" if isinstance(node.ctx, ast.Store) else "load"))

    def visit(stmt):
        if isinstance(stmt, ast.Assign):  # the value runs before the targets are stored
            for node in ast.walk(stmt.value):
                see(node)
            for target in stmt.targets:
                for node in ast.walk(target):
                    see(node)
        elif isinstance(stmt, ast.AugAssign):
            for node in ast.walk(stmt):
                see(node, "load")
        else:
            for node in ast.walk(stmt):
                see(node)

    for stmt in block:
        visit(stmt)
    return first


def _parse_block(lines: list[str]) -> list[ast.stmt] | None:
    try:
        return pysource.parse(textwrap.dedent("\n".join(lines))).body
    except SyntaxError:
        return None


def _keepable(stmt: ast.stmt, new_block: list[ast.stmt] | None, solution_names: set) -> bool:
    """May this starter statement run just before the solution's lines, unchanged?"""
    if isinstance(stmt, ast.Pass):
        return True
    if not isinstance(stmt, ast.Assign) or not _pure(stmt.value):
        return False
    names = _targets(stmt)
    if names is None:
        return False
    first = _first_use(new_block) if new_block is not None else {}
    # Overwritten by the solution before it is read, or a name the solution never uses.
    return all(first.get(n) == "store" or n not in solution_names for n in names)


def _comment_out(lines: list[str]) -> list[str]:
    return [f"{_indent(line)}# {line.strip()}" if _is_code(line) else line for line in lines]


def _kept_starter(old: list[str], new: list[str], solution_names: set) -> list[str]:
    """The starter's lines of one change, as they stay above the solution region."""
    if not any(_is_code(line) for line in old):
        return list(old)
    block = _parse_block(old)
    if block is None:
        return _comment_out(old)
    new_block = _parse_block(new)
    out = list(old)
    for stmt in block:  # dedent keeps every line, so statement line numbers index `old`
        if not _keepable(stmt, new_block, solution_names):
            out[stmt.lineno - 1 : stmt.end_lineno] = _comment_out(out[stmt.lineno - 1 : stmt.end_lineno])
    return out


def annotate(starter: str, solution: str, *, commented_only: bool = False) -> str:
    """The instructor's cell: the solution, each change from the starter in a solution region
    with the starter's lines above it. `commented_only` comments out every starter code line
    (the fallback when keeping some of them would not compile)."""
    old_units, new_units = logical_units(starter), logical_units(solution)
    try:
        solution_names = {n.id for n in ast.walk(pysource.parse(solution)) if isinstance(n, ast.Name)}
    except SyntaxError:
        solution_names = set()
    matcher = difflib.SequenceMatcher(
        None, ["\n".join(u) for u in old_units], ["\n".join(u) for u in new_units], autojunk=False
    )
    out: list[str] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        new = [line for unit in new_units[j1:j2] for line in unit]
        if op == "equal":
            out += new
            continue
        old = [line for unit in old_units[i1:i2] for line in unit]
        out += _comment_out(old) if commented_only else _kept_starter(old, new, solution_names)
        code = [line for line in new if _is_code(line)]
        if code:  # a change that is only comments needs no region: the starter's stay
            indent = _indent(code[0])
            out += [indent + BEGIN, *new, indent + END]
    return "\n".join(out) + ("\n" if solution.endswith("\n") else "")


def released(annotated: str, stub: str = STUB) -> str:
    """What nbgrader's ClearSolutions makes of `annotated` (for tests; grader/course/build.py uses
    nbgrader's own preprocessor)."""
    out, inside = [], False
    for line in annotated.split("\n"):
        if BEGIN.lstrip("# ") in line:
            inside = True
            out += [_indent(line) + s for s in stub.split("\n")]
        elif END.lstrip("# ") in line:
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out)


def without_markers(annotated: str) -> str:
    """The instructor's cell as code: the same text without the region marker lines."""
    return "\n".join(line for line in annotated.split("\n") if line.strip() not in (BEGIN, END))

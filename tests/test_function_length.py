"""Functions fit on a screen: none in grader/ is longer than LIMIT lines (docstring and comments
included)."""

import ast
from pathlib import Path

import pytest

GRADER = Path(__file__).resolve().parent.parent / "grader"
LIMIT = 80
PACKAGES = sorted(p.name for p in GRADER.iterdir() if p.is_dir() and (p / "__init__.py").exists())


def long_functions(folder: Path, limit: int = LIMIT) -> list[str]:
    """'file:line name (n lines)' of every function under `folder` longer than `limit` lines."""
    return [f for path in sorted(folder.rglob("*.py")) for f in long_functions_in(path, limit)]


def long_functions_in(path: Path, limit: int = LIMIT) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > limit:
                found.append(f"{path.name}:{node.lineno} {node.name} ({length} lines)")
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_no_function_is_longer_than_the_limit(package):
    """Is every function of grader/<package> at most LIMIT lines long?"""
    assert long_functions(GRADER / package) == []


def test_no_top_level_module_function_is_longer_than_the_limit():
    """grader/*.py, outside the subpackages."""
    found = [f for path in sorted(GRADER.glob("*.py")) for f in long_functions_in(path)]
    assert found == []


def statements(indent: str, count: int) -> str:
    return "".join(f"{indent}x = {k}\n" for k in range(count))


def test_a_function_one_line_over_the_limit_is_named(tmp_path):
    """Is a method or an outer function one line over the limit named, and one at the limit,
    or nested inside a long one, not?"""
    (tmp_path / "at_limit.py").write_text("def fits():\n" + statements("    ", LIMIT - 1))
    (tmp_path / "over.py").write_text("class C:\n    def method(self):\n" + statements("        ", LIMIT))
    nested = "def outer():\n    def inner():\n" + statements("        ", LIMIT - 2) + "    return inner\n"
    (tmp_path / "nested.py").write_text(nested)
    found = long_functions(tmp_path)
    assert found == [f"nested.py:1 outer ({LIMIT + 1} lines)", f"over.py:2 method ({LIMIT + 1} lines)"], found

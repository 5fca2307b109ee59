"""Code a newcomer can hold in their head: no function in grader/ is longer than LIMIT lines
(docstring and comments included) or takes more than MAX_PARAMETERS parameters (`self` aside),
and no module is longer than MODULE_LIMIT lines."""

import ast
from pathlib import Path

import pytest

GRADER = Path(__file__).resolve().parent.parent / "grader"
LIMIT = 80
MODULE_LIMIT = 500
MAX_PARAMETERS = 8
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


def parameter_count(node) -> int:
    """A def's parameters, `*args` and `**kwargs` counted, a method's `self` or `cls` not."""
    args = node.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    return len(names) + (args.vararg is not None) + (args.kwarg is not None)


def crowded_functions(folder: Path) -> list[str]:
    """'file:line name (n parameters)' of every function under `folder` past MAX_PARAMETERS."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and parameter_count(node) > MAX_PARAMETERS:
                found.append(
                    f"{path.relative_to(folder)}:{node.lineno} {node.name} ({parameter_count(node)} parameters)"
                )
    return found


def long_modules(folder: Path) -> list[str]:
    return [
        f"{path.relative_to(folder)} ({n} lines)"
        for path in sorted(folder.rglob("*.py"))
        if (n := len(path.read_text().splitlines())) > MODULE_LIMIT
    ]


def test_no_function_takes_more_than_eight_parameters():
    """Is every function of grader/ called with at most MAX_PARAMETERS parameters (a longer list
    is a missing object: grader/children/task.py `ReplayTask`)?"""
    assert crowded_functions(GRADER) == []


def test_no_module_is_longer_than_the_module_limit():
    """Is every module of grader/ at most MODULE_LIMIT lines (one concern a module)?"""
    assert long_modules(GRADER) == []


def test_a_crowded_function_and_a_long_module_are_named(tmp_path):
    """Are nine parameters (`*args` counted) and MODULE_LIMIT + 1 lines named, and eight
    parameters with `self`, or MODULE_LIMIT lines, not?"""
    (tmp_path / "crowded.py").write_text("def f(a, b, c, d, e, f, g, h, *rest):\n    pass\n")
    (tmp_path / "fits.py").write_text("class C:\n    def m(self, a, b, c, d, e, f, g, h):\n        pass\n")
    (tmp_path / "at_limit.py").write_text("x = 1\n" * MODULE_LIMIT)
    (tmp_path / "over.py").write_text("x = 1\n" * (MODULE_LIMIT + 1))
    assert crowded_functions(tmp_path) == ["crowded.py:1 f (9 parameters)"]
    assert long_modules(tmp_path) == [f"over.py ({MODULE_LIMIT + 1} lines)"]

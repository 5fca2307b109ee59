"""The dependency rule of grader/ (docs/ARCHITECTURE.md, "Layers"): every import, those inside
functions included, points to a lower layer or stays inside its own package; no cycles at all;
kernels/ use only the authoring API; bench/ only public names."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

LAYERS = [
    {
        "grader.settings",
        "grader.sentinels",
        "grader.textsafe",
        "grader.kernel_names",
        "grader.pysource",
    },  # defaults, limits, names, parsing
    {"grader.backend", "grader.paths"},
    {"grader.authoring"},
    {"grader.exercises", "grader.result"},
    {"grader.containment"},
    {"grader.steps"},
    {"grader.compiler"},  # Numba's real CUDA compiler, in a helper process, before a CPU engine runs
    {"grader.doctor", "grader.gpu"},  # the two engines never import each other
    {"grader.replay"},  # a launch recorded without data, replayed by grader code on either engine
    {"grader.children"},  # the processes where submission code runs, and how a check follows them
    {"grader.checking", "grader.render"},
    {"grader.learner", "grader.classroom"},
    {"grader.notebook"},
    {"grader.report", "grader.course"},
    {"grader.cli", "grader.wiring"},  # the wiring: what every entry point installs (grader/__init__.py)
    {"grader", "grader.nbgrader_cells", "grader.nbgrader_plugins"},  # the facade and old import paths
]
LAYER_OF = {unit: level for level, units in enumerate(LAYERS) for unit in units}


def module_name(path: Path) -> str:
    if not path.is_relative_to(ROOT):  # a file a test wrote elsewhere
        return path.stem
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


GRADER_FILES = sorted((ROOT / "grader").rglob("*.py"))
MODULES = {module_name(p) for p in GRADER_FILES}


DYNAMIC_IMPORTS = {"import_module", "__import__"}
"""Calls that import a module named by a string (importlib.import_module, __import__)."""


def imported_names(path: Path) -> set[str]:
    """Every grader module `path` names in an import statement or a dynamic import of a constant
    name (`importlib.import_module("grader.x")`), wherever it is."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call) and _called_name(node.func) in DYNAMIC_IMPORTS and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.add(first.value)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            for alias in node.names:  # `from grader import backend` names the module grader.backend
                full = f"{base}.{alias.name}"
                found.add(full if full in MODULES else base)
    return {n for n in found if n == "grader" or n.startswith("grader.")}


def _called_name(func) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def private_names(path: Path) -> set[str]:
    """`grader.x._name` for every private name `path` takes from the grader: a module or package
    behind an underscore, or `from grader.x import _name`."""
    found = {n for n in imported_names(path) if any(part.startswith("_") for part in n.split(".")[1:])}
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("grader"):
            found |= {f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_")}
    return found


def resolve(name: str) -> str:
    """The module an imported name lives in (`grader.x.f` -> `grader.x`)."""
    while name not in MODULES and "." in name:
        name = name.rpartition(".")[0]
    return name


def unit_of(module: str) -> str:
    """The layer table's entry for a module: its subpackage, or itself at the top."""
    parts = module.split(".")
    unit = ".".join(parts[:2])
    return unit if unit in LAYER_OF else module


def graph() -> dict[str, set[str]]:
    return {module_name(p): {resolve(n) for n in imported_names(p)} - {module_name(p)} for p in GRADER_FILES}


def test_every_grader_module_has_a_layer():
    """Does the layer table place every module (no module outside the rule)?"""
    assert sorted(m for m in MODULES if unit_of(m) not in LAYER_OF) == []


def test_imports_point_down_or_stay_inside_their_package():
    """Does any module import from its own layer's sibling or from a higher layer?"""
    wrong = []
    for module, targets in graph().items():
        for target in targets:
            source_unit, target_unit = unit_of(module), unit_of(target)
            if source_unit == target_unit and source_unit != "grader":
                continue
            if target == "grader" and module != "grader":
                wrong.append(f"{module} -> grader (import grader.backend to choose the back end)")
            elif LAYER_OF.get(target_unit, 99) >= LAYER_OF.get(source_unit, -1):
                wrong.append(f"{module} -> {target}")
    assert sorted(wrong) == []


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_cycles_anywhere_in_grader():
    """Is there any cycle, counting imports inside functions and package __init__ files?"""
    edges = {m: {t for t in ts if t != "grader"} for m, ts in graph().items() if m != "grader"}
    assert find_cycle(edges) is None


def test_the_cycle_finder_finds_a_cycle():
    """Would the cycle test notice one (a -> b -> c -> a)?"""
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]


@pytest.mark.parametrize("path", sorted((ROOT / "kernels").glob("*.py")), ids=lambda p: p.stem)
def test_kernels_import_only_the_authoring_api(path):
    """Do the bundled reference kernels stay off the engine (grader.authoring only)?"""
    outside = {n for n in imported_names(path) if not (n == "grader.authoring" or n.startswith("grader.authoring."))}
    assert outside == set()


@pytest.mark.parametrize("path", sorted((ROOT / "bench").glob("*.py")), ids=lambda p: p.stem)
def test_bench_imports_only_public_names(path):
    """Do the benchmarks use public names only (no `_private` function of the grader)?"""
    assert private_names(path) == set()


def test_the_scans_see_dynamic_imports_and_private_names(tmp_path):
    """Would the rule notice an import by name (importlib.import_module, __import__) and a
    private name taken from a grader module (the two ways past it a plain import scan misses)?"""
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text(
        "import importlib\n"
        "def f():\n"
        "    return importlib.import_module('grader.cli'), __import__('grader.report')\n"
        "from grader.children.spawn import _sandboxed\n"
    )
    assert {"grader.cli", "grader.report"} <= imported_names(sneaky)
    assert private_names(sneaky) == {"grader.children.spawn._sandboxed"}

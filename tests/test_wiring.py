"""The tables lower layers read are filled in one place, grader/wiring.py, in the order it
writes them: not by whichever module happened to be imported first."""

import ast
from pathlib import Path

import numpy as np
import pytest

import grader
from grader import wiring
from grader.backend import simulator
from grader.compiler import simulator_hook

ROOT = Path(__file__).resolve().parent.parent
TABLES = {"VIEWS", "VIEW_CLASSES", "ON_INSTALL", "BEFORE_LAUNCH", "KERNEL_VALUES"}
"""The names the wired tables go by wherever they are used."""
ATTRIBUTES = {"make_kernel"}
"""Wired attributes (of `FAKE_CUDA`)."""
FILLING = {"append", "extend", "insert", "update", "setdefault"}


def test_every_table_holds_what_the_wiring_lists_in_that_order():
    """After `import grader` (and again after a second install), does each table hold exactly
    the wiring's entries, in the written order, none twice?"""
    wiring.install()
    for table, entries in wiring.wiring():
        if isinstance(table, list):
            assert table == list(entries)
        elif isinstance(table, dict):
            assert all(table[key] is value for key, value in entries.items())
        else:
            assert all(getattr(table, name) is value for name, value in entries.items())


def test_the_tables_follow_the_written_order(monkeypatch):
    """Does reordering the wiring's list reorder the launch steps (the order is the one written,
    whatever the imports did)?"""
    first, second = (lambda kernel, args: args), (lambda kernel, args: args)
    listed = [(simulator.BEFORE_LAUNCH, [first, second])]
    monkeypatch.setattr(wiring, "wiring", lambda: listed)
    try:
        wiring.install()
        assert simulator.BEFORE_LAUNCH == [first, second]
        listed[0] = (simulator.BEFORE_LAUNCH, [second, first])
        wiring.install()
        assert simulator.BEFORE_LAUNCH == [second, first]
    finally:
        monkeypatch.undo()
        wiring.install()
    assert simulator.BEFORE_LAUNCH == [simulator_hook.compiled_first]


@pytest.mark.skipif(grader.BACKEND != "simulator", reason="the launch steps are the simulator's")
def test_a_launch_from_the_host_runs_the_steps_in_the_written_order(monkeypatch):
    """Does a simulated kernel launch run BEFORE_LAUNCH's steps in the order the wiring lists?"""
    from numba import cuda

    simulator.install()
    seen = []

    def step(name):
        def record(kernel, args):
            seen.append(name)
            return args

        return record

    @cuda.jit
    def fill(out):
        out[cuda.grid(1)] = 1.0

    monkeypatch.setattr(simulator, "BEFORE_LAUNCH", [step("a"), step("b")])
    monkeypatch.setattr(wiring, "wiring", lambda: [(simulator.BEFORE_LAUNCH, [step("first"), step("second")])])
    wiring.install()
    out = np.zeros(4)
    fill[1, 4](out)
    assert seen == ["first", "second"] and out.tolist() == [1.0] * 4


def filled_outside_the_wiring(path: Path) -> list[str]:
    """Where `path` fills a wired table: `T.append(...)`, `T.update(...)`, `T[k] = ...`, or an
    attribute of one set (`FAKE_CUDA.make_kernel = ...`)."""
    tree = ast.parse(path.read_text(), str(path))
    names = TABLES | aliases(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in FILLING:
            target = node.func.value
        elif isinstance(node, ast.AugAssign):  # `T += [...]`
            target = node.target
        elif isinstance(node, ast.Assign):
            if any(isinstance(t, ast.Attribute) and t.attr in ATTRIBUTES for t in node.targets):
                found.append(f"{path.name}:{node.lineno}")
            target = next((t.value for t in node.targets if isinstance(t, ast.Subscript)), None)
        else:
            continue
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in names:
            found.append(f"{path.name}:{node.lineno}")
    return found


def aliases(tree) -> set[str]:
    """Other names a module gives a table: `import T as _t`, `_t = T`."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found |= {a.asname for a in node.names if a.name in TABLES and a.asname}
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in TABLES:
            found |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return found


def test_no_module_but_the_wiring_fills_a_table():
    """Does any module of grader/ fill a wired table itself, so that what the table holds would
    depend on which module was imported first?"""
    found = [
        hit
        for path in sorted((ROOT / "grader").rglob("*.py"))
        if path.name != "wiring.py"
        for hit in filled_outside_the_wiring(path)
    ]
    assert found == []


def test_the_scan_sees_each_way_of_filling_a_table(tmp_path):
    """Would the scan notice an append, an update, an item and an attribute set from outside,
    also under another name?"""
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text(
        "from grader.backend.simulator import BEFORE_LAUNCH, ON_INSTALL\n"
        "from grader.doctor.fakecuda import FAKE_CUDA\n"
        "from grader.result import VIEWS\n"
        "BEFORE_LAUNCH.append(print)\n"
        "VIEWS.update(text=str)\n"
        "VIEWS['html'] = str\n"
        "FAKE_CUDA.make_kernel = print\n"
        "ON_INSTALL += [print]\n"
        "from grader.backend.simulator import KERNEL_VALUES as _steps\n"
        "_steps.append(print)\n"
        "from grader.doctor.memory import VIEW_CLASSES\n"
        "_classes = VIEW_CLASSES\n"
        "_classes[1] = object\n"
    )
    assert len(filled_outside_the_wiring(sneaky)) == 7

"""What stays out of a process until it is used (pyproject.toml's ruff section lists why each
import inside a function stays there): `import grader` never loads numba or the heavy packages,
nor the machinery only a file check or a GPU runs; a recording child never loads the GPU timing."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

HEAVY = [
    "numba",
    "rich",
    "matplotlib",
    "ipywidgets",
    "IPython",
    "nbgrader",
    "dask",
    "distributed",
    "seccomp",
    "pyseccomp",
]
"""Packages a process loads only when it uses them."""


def loaded_after(code: str) -> set:
    """The modules a fresh interpreter holds after running `code`, on the simulator."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "ZEROGPU_BACKEND": "simulator"},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


@pytest.fixture(scope="module")
def after_import_grader() -> set:
    return loaded_after("import grader")


@pytest.mark.parametrize("package", HEAVY)
def test_import_grader_loads_no_heavy_package(after_import_grader, package):
    """Does `import grader` (every notebook, every child, every command) leave `package` unloaded?
    numba above all: the back end must be chosen before it loads."""
    assert package not in after_import_grader


@pytest.mark.parametrize(
    "module",
    [
        "grader.children.run",
        "grader.children.spares",
        "grader.children.recording",
        "grader.children.replayers",
        "grader.replay",
        "grader.gpu",
    ],
)
def test_import_grader_leaves_what_a_check_starts_for_the_check(after_import_grader, module):
    """Is the child-process and GPU-timing machinery loaded by a check, not by `import grader`?"""
    assert module not in after_import_grader


def test_the_childs_own_imports_load_neither_numba_nor_the_gpu_timing():
    """A child imports what `python -m grader.children` and its recording role import at their
    top: does that leave numba (loaded when a kernel runs, after the limits) and gpu/ (a
    replaying child's) out?"""
    loaded = loaded_after("import grader.children.__main__, grader.children.roles.record")
    assert "grader.children.roles.record" in loaded
    assert {"numba", "grader.gpu", "grader.replay.launch"}.isdisjoint(loaded)


@pytest.fixture(scope="module")
def after_import_cli() -> set:
    return loaded_after("import grader.cli; grader.cli.build_parser()")


@pytest.mark.parametrize("package", HEAVY + ["nbformat"])
def test_zerogpu_loads_no_heavy_package_before_a_command_needs_it(after_import_cli, package):
    """`zerogpu` builds its parser from every command's module: does that leave matplotlib
    (`zerogpu report`, `progress --picture`) and nbformat (an nbgrader course) unloaded?"""
    assert package not in after_import_cli


@pytest.mark.parametrize("module", ["grader.containment.sandbox", "grader.children.run", "grader.children.replayers"])
def test_zerogpu_leaves_the_checks_machinery_for_the_commands_that_check(after_import_cli, module):
    """Does every `zerogpu` command (its parser loads each command's module) start without the
    sandbox and the child-process machinery, which `zerogpu check` and `grade` load as they run?"""
    assert module not in after_import_cli


def test_the_compile_helper_loads_no_grader_package():
    """The compile helper runs grader/compiler/server.py as a script, which loads rebuild.py and
    what it needs by their paths: `import grader` there would choose a back end and load the
    grader's wiring (a third of a second) in a process that only compiles."""
    server = ROOT / "grader" / "compiler" / "server.py"
    code = (
        "import runpy, sys\n"
        f"sys.path[0] = {str(server.parent)!r}\n"
        f"runpy.run_path({str(server)!r}, run_name='zerogpu_compile_helper')"
    )
    loaded = loaded_after(code)
    assert not {m for m in loaded if m == "grader" or m.startswith("grader.")}

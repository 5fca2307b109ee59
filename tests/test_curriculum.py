"""The lesson notebooks: built from curriculum/src/, in step with the exercise files, and
runnable top to bottom on the simulator both as shipped and with the solutions filled in."""

from __future__ import annotations

import importlib.util
import re
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from grader.exercises import LADDER

ROOT = Path(__file__).resolve().parent.parent
CURRICULUM = ROOT / "curriculum"
NOTEBOOKS = sorted(CURRICULUM.glob("[0-9][0-9]-*.ipynb"))
CHECK_CALL = re.compile(r'^grader\.check\("(?P<id>[a-z0-9_]+)", launch\)$')
CELL_TIMEOUT = 300  # seconds; a whole notebook should take well under 30 s on the simulator


def _load_build():
    """curriculum/build.py as a module (curriculum/ is not a package)."""
    name = "zerogpu_curriculum_build"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, CURRICULUM / "build.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while it loads
        spec.loader.exec_module(module)
    return sys.modules[name]


def _read(path: Path):
    return nbformat.read(path, as_version=4)


def _tags(cell) -> list:
    return list(cell.get("metadata", {}).get("tags", []))


def exercise_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code" and "exercise" in _tags(c)]


def exercise_id(cell) -> str:
    ids = [t for t in _tags(cell) if t in LADDER]
    assert len(ids) == 1, f"an exercise cell needs exactly one exercise id tag, has {_tags(cell)}"
    return ids[0]


def check_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code" and "check" in _tags(c)]


def checked_id(cell) -> str:
    last = cell.source.strip().splitlines()[-1]
    found = CHECK_CALL.match(last)
    assert found, f"a check cell must end with grader.check(\"<id>\", launch), not {last!r}"
    return found.group("id")


def with_solutions(nb):
    """The notebook with every exercise cell replaced by solutions/<id>.py."""
    nb = nbformat.from_dict(nb)
    for cell in exercise_cells(nb):
        cell.source = (ROOT / "solutions" / f"{exercise_id(cell)}.py").read_text(encoding="utf-8")
    return nb


def execute(nb):
    """Run every cell in a fresh kernel started in curriculum/ (as `make lab` does); the
    kernel inherits ZEROGPU_BACKEND=simulator from tests/conftest.py. Returns seconds taken."""
    client = NotebookClient(
        nb, timeout=CELL_TIMEOUT, kernel_name="python3", resources={"metadata": {"path": str(CURRICULUM)}}
    )
    started = time.perf_counter()
    client.execute()
    return time.perf_counter() - started


def shown_html(cell) -> str:
    """The HTML the cell displayed as its result (the check result's rendering)."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "execute_result" and "text/html" in output.get("data", {}):
            return output["data"]["text/html"]
    raise AssertionError(f"the check cell displayed no HTML result; outputs: {cell.get('outputs')}")


def test_there_are_fourteen_notebooks():
    """Are lessons 00 to 13 all there, one notebook each?"""
    assert [p.name[:2] for p in NOTEBOOKS] == [f"{i:02d}" for i in range(14)]


def test_build_output_equals_committed_notebooks(tmp_path):
    """Does curriculum/build.py, run now, write exactly the committed notebooks?"""
    build = _load_build()
    written = build.build(tmp_path)
    assert sorted(p.name for p in written) == [p.name for p in NOTEBOOKS]
    for path in written:
        committed = CURRICULUM / path.name
        assert path.read_text(encoding="utf-8") == committed.read_text(encoding="utf-8"), (
            f"{path.name} is out of date: run `python curriculum/build.py`"
        )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_without_outputs(path):
    """Is every code cell committed without outputs and without an execution count?"""
    for cell in _read(path).cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_first_code_cell_is_the_setup_cell(path):
    """Does every notebook start with the setup cell: tagged, `import grader` first, and
    printing the back end?"""
    first = next(c for c in _read(path).cells if c.cell_type == "code")
    assert "setup" in _tags(first)
    statements = [line for line in first.source.splitlines() if line and not line.startswith("#")]
    assert statements[0].startswith("import grader")
    assert "grader.BACKEND" in first.source


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_exercise_cells_hold_the_exercise_files(path):
    """Does every exercise cell hold exercises/<id>.py exactly, and is it followed by its
    check cell?"""
    nb = _read(path)
    for cell in exercise_cells(nb):
        ex = exercise_id(cell)
        assert cell.source == (ROOT / "exercises" / f"{ex}.py").read_text(encoding="utf-8"), (
            f"{path.name}: the {ex} cell differs from exercises/{ex}.py: rebuild the notebooks"
        )
    ids = [exercise_id(c) for c in exercise_cells(nb)]
    assert [checked_id(c) for c in check_cells(nb)] == ids


def test_every_exercise_of_the_ladder_is_taught_once():
    """Does each exercise id of the ladder appear in exactly one notebook, in ladder order?"""
    taught = [exercise_id(c) for p in NOTEBOOKS for c in exercise_cells(_read(p))]
    assert taught == list(LADDER)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_links_to_other_notebooks_resolve(path):
    """Does every link to another lesson point at a notebook that exists?"""
    for cell in _read(path).cells:
        if cell.cell_type == "markdown":
            for target in re.findall(r"\]\(([^)#]+\.ipynb)\)", cell.source):
                assert (CURRICULUM / target).is_file(), f"{path.name} links to missing {target}"


@pytest.mark.slow  # every lesson run through as a learner first gets it: about two minutes on 2 cores
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_runs_as_shipped(path):
    """Does the notebook run to the end with the starter code, every check saying "Not yet"?"""
    nb = _read(path)
    execute(nb)
    for cell in check_cells(nb):
        html = shown_html(cell)
        assert f"<b>{checked_id(cell)}</b>" in html and "Not yet" in html, html


@pytest.mark.thorough  # every lesson run through with its solutions (test_ladder checks each solution)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_runs_with_solutions(path):
    """With solutions/<id>.py in every exercise cell, does every check pass?"""
    nb = with_solutions(_read(path))
    execute(nb)
    for cell in check_cells(nb):
        html = shown_html(cell)
        assert f"<b>{checked_id(cell)}</b>" in html and "Passed" in html, html


def test_builder_reads_every_kind_of_marker():
    """Does the source format give Markdown, tagged code, exercise and check cells?"""
    build = _load_build()
    source = "\n".join(
        [
            "# a comment for editors, skipped",
            "# %% [markdown]",
            "# # Title",
            "#",
            "# text",
            '# %% tags=["setup"]',
            "import grader",
            "",
            "# %% [exercise] vector_add",
            "# %% [check] vector_add",
        ]
    )
    nb = build.to_notebook(build.parse(source))
    assert [c.cell_type for c in nb.cells] == ["markdown", "code", "code", "code"]
    assert nb.cells[0].source == "# Title\n\ntext"
    assert nb.cells[1].source == "import grader" and _tags(nb.cells[1]) == ["setup"]
    assert _tags(nb.cells[2]) == ["vector_add", "exercise"]
    assert nb.cells[3].source == 'grader.check("vector_add", launch)'


@pytest.mark.parametrize(
    "source",
    [
        "# %% [exercise] vector_add\nprint('text under an exercise marker')",
        "# %% [markdown]\nMarkdown without its '# ' prefix",
        "# %% [exercise] no_such_exercise",
        "# %% [slides]",
        "no marker at all",
    ],
    ids=["text-under-exercise", "bare-markdown", "unknown-exercise", "unknown-marker", "no-marker"],
)
def test_builder_refuses_a_broken_source(source):
    """Is a malformed source refused with a SourceError rather than built wrongly?"""
    build = _load_build()
    with pytest.raises(build.SourceError):
        build.to_notebook(build.parse(source))

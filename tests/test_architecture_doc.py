"""docs/ARCHITECTURE.md stays true to grader/: the layer table names every module and only
folders and files that exist; the "where things live" guide names only paths that exist and
names defined in them, and covers every subpackage."""

import re
from pathlib import Path

import pytest

from test_layers import LAYERS

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "ARCHITECTURE.md").read_text()

REPOSITORY_PATH = re.compile(r"\b(?:grader|docs|tests|bench|kernels|exercises|solutions|curriculum)/[\w./-]*")
"""A path the page names from the repository root (`grader/gpu/speed.py`, docs/DOCTOR.md)."""


def section(title: str) -> str:
    return DOC.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def table_rows(title: str) -> list[list[str]]:
    """The cells of each row of the first table under '## title', its header and rule left out."""
    lines = [line for line in section(title).splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.split("|")[1:-1]] for line in lines[2:]]


def layer_rows() -> list[tuple[str, str]]:
    """(where, what) of each row of the table under '## Layers'."""
    return [(row[1], row[2]) for row in table_rows("Layers")]


def unit(name: str) -> str:
    """The module a 'where' cell names: `cli/` is grader.cli, `grader/__init__.py` grader."""
    name = name.removeprefix("grader/").removesuffix("/").removesuffix(".py")
    return "grader" if name == "__init__" else f"grader.{name}"


def guide_rows() -> list[tuple[str, list[str]]]:
    """(concern, the backquoted names of its 'where' cell) of each row of '## Where things live'."""
    return [(row[0], re.findall(r"`([^`]+)`", row[1])) for row in table_rows("Where things live")]


def test_every_place_the_table_names_exists():
    """Does each `folder/` or `file.py` of the 'where' column exist under grader/?"""
    named = [token for where, _ in layer_rows() for token in re.findall(r"`([^`]+)`", where)]
    assert named, "the layer table is missing"
    missing = [t for t in named if not (ROOT / "grader" / t.removeprefix("grader/")).exists()]
    assert missing == []


def test_the_layers_are_numbered_as_the_layer_test_numbers_them():
    """Is row N of the table exactly tests/test_layers.py's layer N, from 0 up?"""
    rows = {int(row[0]): {unit(n) for n in re.findall(r"`([^`]+)`", row[1])} for row in table_rows("Layers")}
    assert rows == dict(enumerate(LAYERS))


def test_every_module_is_named_in_the_table():
    """Is each module of grader/ in the table: a top-level file by name, a module of a
    subpackage in its row's text (`harness`)?"""
    rows = layer_rows()
    missing = []
    for path in sorted((ROOT / "grader").rglob("*.py")):
        rel = path.relative_to(ROOT / "grader")
        if rel.name in ("__init__.py", "__main__.py") or rel.parts[0] == "doctor":
            continue  # packages are named by their folder; the doctor's modules: docs/DOCTOR.md
        if len(rel.parts) == 1:
            found = any(f"`{rel.name}`" in where or f"`grader/{rel.name}`" in where for where, _ in rows)
        else:
            found = any(f"`{rel.parts[0]}/`" in where and f"`{path.stem}`" in what for where, what in rows)
        if not found:
            missing.append(str(rel))
    assert missing == []


def is_path(name: str) -> bool:
    return "/" in name or name.endswith(".py")


def test_every_path_the_guide_names_exists():
    """Does each file or folder of the 'where things live' guide exist in the repository?"""
    named = [name for _, names in guide_rows() for name in names if is_path(name)]
    assert len(named) > 20, "the guide is missing"
    assert [name for name in named if not (ROOT / name).exists()] == []


def defines(path: Path, name: str) -> bool:
    """Does `path` (a file, or any .py under a folder) define `name`: a def, a class, an assignment?"""
    files = [path] if path.is_file() else sorted(path.rglob("*.py"))
    pattern = re.compile(rf"^\s*(?:(?:async )?def|class)\s+{name}\b|^\s*{name}\s*(?::[^=\n]*)?=", re.MULTILINE)
    return any(pattern.search(f.read_text()) for f in files)


def test_every_name_the_guide_gives_is_defined_where_it_says():
    """Is each function, class or constant of a row (`_follow`) defined in one of that row's files?"""
    wrong = []
    for concern, names in guide_rows():
        places = [ROOT / name for name in names if is_path(name)]
        for name in names:
            if not is_path(name) and not any(defines(place, name) for place in places):
                wrong.append(f"{concern}: {name}")
    assert wrong == []


def test_every_subpackage_is_in_the_guide():
    """Does the guide send a newcomer into each subpackage of grader/ at least once?"""
    named = " ".join(name for _, names in guide_rows() for name in names)
    packages = sorted(p.parent.name for p in (ROOT / "grader").glob("*/__init__.py"))
    assert len(packages) > 10
    assert [p for p in packages if f"grader/{p}/" not in named] == []


def test_every_repository_path_on_the_page_exists():
    """Does every path the page names from the repository root exist (templates like <id> aside)?"""
    named = {m.rstrip(".") for m in REPOSITORY_PATH.findall(DOC) if "<" not in m}
    assert [name for name in sorted(named) if not (ROOT / name).exists()] == []


def test_the_page_links_nothing_outside_the_repository():
    """Does the page stay inside the repository: no `../` path, every relative link a file here?"""
    assert "../" not in DOC
    targets = re.findall(r"\]\((?!https?://|#)([^)#]+)", DOC)
    inside = [(ROOT / "docs" / target).resolve() for target in targets]
    assert [str(path) for path in inside if not (path.is_relative_to(ROOT) and path.exists())] == []


@pytest.mark.parametrize("page", ["ARCHITECTURE.md", "BENCHMARKS.md"])
def test_the_page_a_newcomer_reads_first_stays_short(page):
    """Is the page read in one sitting (at most 2,500 words; history goes to BENCHMARKS-LOG.md)?"""
    assert len((ROOT / "docs" / page).read_text().split()) <= 2500

"""docs/ARCHITECTURE.md's layer table stays true to grader/: every folder and file it names
exists, and every module of grader/ is named in it."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "ARCHITECTURE.md").read_text()


def layer_rows() -> list[tuple[str, str]]:
    """(where, what) of each row of the table under '## Layers'."""
    section = DOC.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[2:4] for line in section.splitlines() if re.match(r"\| \d+½? \|", line)]
    return [(where.strip(), what.strip()) for where, what in rows]


def test_every_place_the_table_names_exists():
    """Does each `folder/` or `file.py` of the 'where' column exist under grader/?"""
    named = [token for where, _ in layer_rows() for token in re.findall(r"`([^`]+)`", where)]
    assert named, "the layer table is missing"
    missing = [t for t in named if not (ROOT / "grader" / t.removeprefix("grader/")).exists()]
    assert missing == []


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

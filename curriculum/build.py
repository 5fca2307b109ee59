"""Build the lesson notebooks curriculum/NN-*.ipynb from their sources in curriculum/src/.

    python curriculum/build.py            # write every notebook next to this file
    python curriculum/build.py --out DIR  # write them into DIR instead
    python curriculum/build.py --check    # exit 1 if a committed notebook is out of date

A source is a Python file in the "percent" format that Jupytext, VS Code and Spyder read,
with two markers of our own. Each cell starts with a marker line:

    # %% [markdown]            a Markdown cell: every line below starts with "# " (or is "#")
    # %%                       a code cell
    # %% tags=["setup"]        a code cell with tags (a JSON list)
    # %% [exercise] vector_add an exercise cell: the exact text of exercises/vector_add.py,
                               tagged ["vector_add", "exercise"]; nothing may follow the marker
    # %% [check] vector_add    the check cell: grader.check("vector_add", launch), tagged ["check"]

Lines before the first marker are a comment for whoever edits the source and are skipped.
Notebooks are written without outputs or execution counts, with stable cell ids, so building
twice gives the same bytes and `git diff` shows only what a source change changed.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SOURCES = HERE / "src"
EXERCISES = ROOT / "exercises"

MARKER = re.compile(r"^# %%(?:\s+(?P<rest>.*))?$")
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


class SourceError(ValueError):
    """A source file breaks the format; the message names the file and line."""


@dataclass
class Cell:
    kind: str
    """"markdown", "code", "exercise" or "check"."""
    line: int
    """Line of the marker in the source (for error messages)."""
    argument: str = ""
    """The exercise id of an exercise or check cell."""
    tags: list = field(default_factory=list)
    lines: list = field(default_factory=list)


def _start(rest: str, line: int, where: str) -> Cell:
    rest = (rest or "").strip()
    if rest == "[markdown]":
        return Cell("markdown", line)
    for kind in ("exercise", "check"):
        if rest.startswith(f"[{kind}]"):
            exercise_id = rest[len(kind) + 2:].strip()
            if not re.fullmatch(r"[a-z0-9_]+", exercise_id):
                raise SourceError(f"{where}:{line}: `# %% [{kind}]` needs an exercise id")
            return Cell(kind, line, exercise_id)
    if rest.startswith("tags="):
        try:
            tags = json.loads(rest[len("tags="):])
        except json.JSONDecodeError as exc:
            raise SourceError(f"{where}:{line}: tags must be a JSON list ({exc})") from None
        return Cell("code", line, tags=list(tags))
    if rest:
        raise SourceError(f"{where}:{line}: unknown cell marker `# %% {rest}`")
    return Cell("code", line)


def parse(text: str, where: str = "<source>") -> list[Cell]:
    """Source text -> cells, in order."""
    cells: list[Cell] = []
    for number, line in enumerate(text.splitlines(), start=1):
        found = MARKER.match(line)
        if found:
            cells.append(_start(found.group("rest"), number, where))
        elif cells:
            cells[-1].lines.append(line)
    if not cells:
        raise SourceError(f"{where}: no `# %%` cell markers")
    return cells


def _trimmed(lines: list) -> list:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def _markdown(cell: Cell, where: str) -> str:
    out = []
    for offset, line in enumerate(_trimmed(cell.lines), start=1):
        if line == "#":
            out.append("")
        elif line.startswith("# "):
            out.append(line[2:])
        else:
            raise SourceError(f"{where}:{cell.line + offset}: a Markdown line must start "
                              f"with '# ' (or be '#'): {line!r}")
    return "\n".join(out)


def exercise_source(exercise_id: str) -> str:
    """The exercise cell holds exercises/<id>.py exactly, byte for byte."""
    path = EXERCISES / f"{exercise_id}.py"
    if not path.is_file():
        raise SourceError(f"no exercise file {path}")
    return path.read_text(encoding="utf-8")


def check_source(exercise_id: str) -> str:
    return f'grader.check("{exercise_id}", launch)'


def to_notebook(cells: list[Cell], where: str = "<source>"):
    """Cells -> an nbformat v4 notebook without outputs, with stable cell ids."""
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}}
    for index, cell in enumerate(cells):
        cell_id = f"cell-{index:02d}"
        if cell.kind == "markdown":
            new = nbformat.v4.new_markdown_cell(_markdown(cell, where))
        elif cell.kind == "code":
            new = nbformat.v4.new_code_cell("\n".join(_trimmed(cell.lines)))
            if cell.tags:
                new.metadata["tags"] = cell.tags
        else:
            if _trimmed(cell.lines):
                raise SourceError(f"{where}:{cell.line}: an [{cell.kind}] cell takes its text "
                                  "from the exercise id; leave its body empty")
            if cell.kind == "exercise":
                new = nbformat.v4.new_code_cell(exercise_source(cell.argument))
                new.metadata["tags"] = [cell.argument, "exercise"]
            else:
                new = nbformat.v4.new_code_cell(check_source(cell.argument))
                new.metadata["tags"] = ["check"]
            cell_id = f"{cell.kind}-{cell.argument}"
        new.id = cell_id
        nb.cells.append(new)
    nbformat.validate(nb)
    return nb


def render(source: Path) -> str:
    """One source file -> the notebook's text, exactly as committed."""
    where = str(source.relative_to(ROOT)) if source.is_relative_to(ROOT) else str(source)
    nb = to_notebook(parse(source.read_text(encoding="utf-8"), where), where)
    return nbformat.writes(nb) + "\n"


def sources(src_dir: Path = SOURCES) -> list[Path]:
    return sorted(p for p in src_dir.glob("[0-9][0-9]-*.py"))


def notebook_name(source: Path) -> str:
    return source.stem + ".ipynb"


def build(out_dir: Path = HERE, src_dir: Path = SOURCES) -> list[Path]:
    """Write every notebook into out_dir; returns the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for source in sources(src_dir):
        path = out_dir / notebook_name(source)
        path.write_text(render(source), encoding="utf-8")
        written.append(path)
    return written


def stale(out_dir: Path = HERE, src_dir: Path = SOURCES) -> list[str]:
    """Names of the notebooks in out_dir that differ from what the sources build."""
    return [notebook_name(s) for s in sources(src_dir)
            if not (out_dir / notebook_name(s)).is_file()
            or (out_dir / notebook_name(s)).read_text(encoding="utf-8") != render(s)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="folder to write into")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a notebook is out of date")
    args = parser.parse_args(argv)
    try:
        if args.check:
            out_of_date = stale(args.out)
            for name in out_of_date:
                print(f"out of date: {name} (run python curriculum/build.py)")
            return 1 if out_of_date else 0
        for path in build(args.out):
            print(f"wrote {path}")
    except SourceError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

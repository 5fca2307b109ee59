"""The learner's own copies of the lessons: the lab works in them, never in curriculum/.

`refresh(curriculum, mine)` copies each lesson the learner has no copy of (the first time, or
after they deleted theirs to start it again) and never overwrites a copy holding their work. A
lesson that changed upstream since it was copied replaces a copy whose code the learner never
touched; beside a copy they worked in, it arrives as `NN-name.new.ipynb`, for them to take
what they want from. A manifest in the folder (`MANIFEST`) remembers what was copied.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

MANIFEST = ".lessons.json"
"""In the copies' folder: per lesson, the upstream version last delivered and, per file written,
the hash of its code as written (to tell a copy the learner worked in from one they did not)."""


@dataclass(frozen=True)
class Delivered:
    """What `refresh` did with one lesson."""

    lesson: str
    action: str
    """"copied" (a new copy), "updated" (an untouched copy replaced by the new version) or
    "offered" (the new version written beside a copy holding the learner's work)."""
    path: Path


def refresh(curriculum: Path, mine: Path) -> list[Delivered]:
    """Bring the copies in `mine` up to date with the lessons in `curriculum` (NN-*.ipynb)."""
    mine.mkdir(parents=True, exist_ok=True)
    manifest = _read_manifest(mine)
    done = []
    for lesson in sorted(curriculum.glob("[0-9][0-9]-*.ipynb")):
        text = lesson.read_text(encoding="utf-8")
        delivered = _deliver(lesson.name, text, mine, manifest)
        if delivered is not None:
            done.append(delivered)
    (mine / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
    return done


def _deliver(name: str, text: str, mine: Path, manifest: dict) -> Delivered | None:
    version = _digest(text)
    entry = manifest.get(name)
    copy = mine / name
    if not copy.exists():
        return _write(name, copy, text, manifest, version, "copied")
    if entry is None:  # a file of that name the lab did not write: the learner's, left as it is
        manifest[name] = {"upstream": version, "written": {}}
        return None
    if entry.get("upstream") == version:
        return None
    if _untouched(copy, entry):
        return _write(name, copy, text, manifest, version, "updated")
    beside = _free_name(mine, name, entry)
    return _write(name, beside, text, manifest, version, "offered")


def _write(name: str, path: Path, text: str, manifest: dict, version: str, action: str) -> Delivered:
    path.write_text(text, encoding="utf-8")
    entry = manifest.get(name) if action == "offered" else None
    written = dict(entry["written"]) if entry else {}
    written[path.name] = _code_digest(text) if _pristine(text) else None
    manifest[name] = {"upstream": version, "written": written}
    return Delivered(name, action, path)


def _untouched(path: Path, entry: dict) -> bool:
    """Does `path` still hold the code it was written with, written from a lesson nobody had
    worked in (a lesson saved with outputs carried someone's work into the copy)?"""
    written = entry.get("written", {}).get(path.name)
    try:
        return written is not None and _code_digest(path.read_text(encoding="utf-8")) == written
    except (OSError, ValueError):
        return False


def _free_name(mine: Path, name: str, entry: dict) -> Path:
    """`NN-name.new.ipynb`, or the same file again while untouched, else `.new2`, `.new3`..."""
    stem = name.removesuffix(".ipynb")
    for number in range(1, 1000):
        path = mine / f"{stem}.new{number if number > 1 else ''}.ipynb"
        if not path.exists() or _untouched(path, entry):
            return path
    raise OSError(f"no free name for a new version of {name} in {mine}")


def _cells(text: str) -> list:
    return [c for c in json.loads(text).get("cells", []) if c.get("cell_type") == "code"]


def _source(cell) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _code_digest(text: str) -> str:
    """A hash of the notebook's code cells' text, which running cells and saving leave as is."""
    return _digest("\x00".join(_source(c) for c in _cells(text)))


def _pristine(text: str) -> bool:
    """Is this a lesson as shipped (no outputs, no execution counts), not one someone ran?"""
    return all(not c.get("outputs") and c.get("execution_count") is None for c in _cells(text))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _read_manifest(mine: Path) -> dict:
    try:
        data = json.loads((mine / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}

"""Is a folder a plain class (DIR/<student>/<exercise>.py) or an nbgrader course? Decided by
what is really there, never by one file: a class folder copied out of a course often keeps a
leftover nbgrader_config.py, and a course without nbgrader's folders has nothing to grade.

- a course: nbgrader_config.py and nbgrader's own folders (source/ or submitted/ holding
  folders, autograded/, release/) or its gradebook.db;
- a class: student folders holding exercise files (`thread_ids.py`), and no nbgrader folder;
- both at once: ambiguous, refused with one line naming what was seen and the flag that
  chooses (`--kind class|course`).
A folder is only looked at (names and types, links never followed); nothing in it is read."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from grader.exercises import LADDER

CONFIG = "nbgrader_config.py"
KINDS = ("class", "course")
COURSE_FOLDERS = ("source", "submitted", "autograded", "release")
"""nbgrader's folders in a course (the first two count only when they hold folders)."""
COURSE_FILES = ("gradebook.db",)
"""nbgrader's gradebook, beside its config."""
EXERCISE_FILES = frozenset(f"{e}.py" for e in LADDER)


class FolderKindError(ValueError):
    """The folder could be either kind: the message is one line saying what was seen and how to choose."""


@dataclass(frozen=True)
class FolderKind:
    kind: str
    """"class" or "course"."""
    note: str = ""
    """One line to show when the choice was not obvious (a leftover nbgrader_config.py)."""


def _listing(path: Path) -> list[tuple[str, int]]:
    try:
        names = os.listdir(path)
    except OSError:
        return []
    found = []
    for name in names:
        try:
            found.append((name, os.lstat(path / name).st_mode))
        except OSError:
            continue
    return found


def _holds_folders(path: Path) -> bool:
    return any(stat.S_ISDIR(mode) for _, mode in _listing(path))


def _holds_exercises(path: Path) -> bool:
    return any(name in EXERCISE_FILES and stat.S_ISREG(mode) for name, mode in _listing(path))


def course_signs(folder: Path) -> list[str]:
    """nbgrader's folders and files in `folder` ("source/", "gradebook.db")."""
    seen = []
    for name, mode in _listing(folder):
        if name in COURSE_FOLDERS and stat.S_ISDIR(mode) and not _holds_exercises(folder / name):
            if name not in ("source", "submitted") or _holds_folders(folder / name):
                seen.append(f"{name}/")
        elif name in COURSE_FILES and stat.S_ISREG(mode):
            seen.append(name)
    return sorted(seen)


def student_folders(folder: Path) -> int:
    """Real folders of `folder` (not nbgrader's) that hold at least one exercise file."""
    return sum(
        1
        for name, mode in _listing(folder)
        if stat.S_ISDIR(mode) and not name.startswith(".") and _holds_exercises(folder / name)
    )


def kind_of(folder, asked: str | None = None) -> FolderKind:
    """The kind of `folder`; `asked` ("class" or "course", the `--kind` flag) overrides what is seen."""
    if asked:
        if asked not in KINDS:
            raise FolderKindError(f"--kind is 'class' or 'course', not {asked!r}")
        return FolderKind(asked)
    folder = Path(folder)
    config = (folder / CONFIG).is_file()
    signs, students = course_signs(folder), student_folders(folder)
    seen_course = ", ".join([CONFIG, *signs])
    seen_class = f"{students} student folder{'s' if students != 1 else ''} holding exercise files"
    if config and signs and students:
        raise FolderKindError(
            f"{folder} looks like an nbgrader course ({seen_course}) and like a class folder ({seen_class}): "
            "say which with --kind course or --kind class"
        )
    if config and not signs and students:
        return FolderKind(
            "class",
            f"{CONFIG} is here but no nbgrader folder (source/, submitted/): graded as a class folder "
            f"({seen_class}); --kind course grades it as an nbgrader course",
        )
    return FolderKind("course" if config else "class")

"""Where the grader keeps things, and how it writes them so that any number of processes and
threads touching a file for the first time together is safe.

- `ROOT`: the project folder (exercises/, solutions/, kernels/, curriculum/).
- `data_dir()`: the user's grader data (progress, the grading secret, GPU ceilings), as
  grader/settings.py reads it.
- `write_atomically`: a reader sees the old file or the new one, never a part, even after a
  crash or a full disk.
- `create_once`: the first writer wins; everyone, the losers too, reads the winner's text.
A folder or disk that refuses a write raises `DataDirError`, whose message is one line a user
can act on (which path, what to do); the CLI prints it instead of a traceback.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from pathlib import Path
from typing import Callable

from grader.settings import compile_cache_dir, data_dir  # noqa: F401 - read here by most modules

ROOT = Path(__file__).resolve().parent.parent
GRADEBOOK = "gradebook.sqlite"
"""Our gradebook's name inside a class or course folder (nbgrader's own is gradebook.db)."""


def gradebook_file(folder: Path, db: str | Path | None = None) -> Path:
    """Where a class's (or an nbgrader course's) results are: `db` when given, else FOLDER/GRADEBOOK."""
    return Path(db) if db else Path(folder) / GRADEBOOK


class DataDirError(RuntimeError):
    """A file the grader needs could not be written: the message says which and what to do."""


def cannot_write(path: Path, err: Exception, elsewhere: str | None = None) -> DataDirError:
    """The one-line error for a write that `err` refused: which path, why, and what to do.
    `elsewhere`: how to write it somewhere else ("choose another folder with --out DIR"); by
    default ZEROGPU_HOME for a file of the data dir, where that setting helps, else nothing."""
    if elsewhere is None and _inside(Path(path), data_dir()):
        elsewhere = "set ZEROGPU_HOME to a folder you can write"
    code = getattr(err, "errno", None)
    if code in (errno.ENOSPC, errno.EDQUOT) or "full" in str(err):
        fix = "free some disk space there"
    elif code == errno.EFBIG:
        fix = "raise the file-size limit (ulimit -f)"
    elif code == errno.EROFS:
        fix = "" if elsewhere else "write it on another file system"
    elif code in (errno.EACCES, errno.EPERM):
        fix = "make it writable by you"
    else:
        fix = "make it writable"
    advice = ", or ".join(part for part in (fix, elsewhere) if part)
    return DataDirError(f"cannot write {path}: {getattr(err, 'strerror', None) or err}; {advice}.")


def _inside(path: Path, folder: Path) -> bool:
    return Path(os.path.abspath(path)).is_relative_to(os.path.abspath(folder))


def temporary_name(path: Path) -> str:
    """The glob of the temporary files that `write_atomically` makes for `path`."""
    return f".{Path(path).name}.*.tmp"


def _temporary_beside(path: Path, text: str, mode: int, elsewhere: str | None = None) -> Path:
    """A complete copy of `text` under a temporary name in `path`'s folder, on disk. A lone
    surrogate in `text` is written as its backslash escape (textsafe.unsurrogate), never refused."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as err:
        raise cannot_write(path, err, elsewhere) from None
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise cannot_write(path, err, elsewhere) from None
    return Path(tmp)


def write_atomically(path: Path, text: str, mode: int = 0o644, elsewhere: str | None = None) -> None:
    """Replace `path` with `text` in one step (temporary file, fsynced, then rename): a reader,
    or a write killed half way, leaves the old file or the new one, never a part. `elsewhere`:
    as for `cannot_write`."""
    path = Path(path)
    tmp = _temporary_beside(path, text, mode, elsewhere)
    try:
        os.replace(tmp, path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise cannot_write(path, err, elsewhere) from None
    _sync_folder(path.parent)


def read_json(path: Path, limit: int):
    """What the JSON file `path` holds; None when it is missing, unreadable, over `limit` bytes
    or not JSON (read once, so a file that grows meanwhile is still capped)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
        return json.loads(data) if len(data) <= limit else None
    except (OSError, ValueError):
        return None


def _sync_folder(folder: Path) -> None:
    """Put a rename on disk (best effort: some file systems cannot fsync a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def create_once(path: Path, make_text: Callable[[], str], mode: int = 0o600) -> str:
    """`path`'s text, creating the file first when it is missing. The new file is written whole
    under a temporary name and hard-linked into place, which fails if `path` exists: when
    several processes race, one link wins and every process returns the winner's text. Never an
    empty or partial read."""
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        pass  # made below, or refused there with the reason
    except OSError as err:
        raise DataDirError(f"cannot read {path}: {err.strerror or err}; make it readable by you.") from None
    tmp = _temporary_beside(path, make_text(), mode)
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass  # another process won; its file is complete, since it was linked whole
    except OSError as err:
        raise cannot_write(path, err) from None
    finally:
        tmp.unlink(missing_ok=True)
    return path.read_text(encoding="utf-8")

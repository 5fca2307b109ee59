"""Where the grader keeps things, and how it writes them so that any number of processes and
threads touching a file for the first time together is safe.

- `ROOT`: the project folder (exercises/, solutions/, kernels/, curriculum/).
- `data_dir()`: the user's grader data (progress, the grading secret, GPU ceilings):
  `$ZEROGPU_HOME`, else `$XDG_DATA_HOME/zerogpu`, else `~/.local/share/zerogpu`.
- `write_atomically`: a reader sees the old file or the new one, never a part.
- `create_once`: the first writer wins; everyone, the losers too, reads the winner's text.
A folder or disk that refuses a write raises `DataDirError`, whose message is one line a user
can act on (which path, what to do); the CLI prints it instead of a traceback.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
GRADEBOOK = "gradebook.sqlite"
"""Our gradebook's name inside a class or course folder (nbgrader's own is gradebook.db)."""


def gradebook_file(folder: Path, db: str | Path | None = None) -> Path:
    """Where a class's (or an nbgrader course's) results are: `db` when given, else FOLDER/GRADEBOOK."""
    return Path(db) if db else Path(folder) / GRADEBOOK


def compile_cache_dir() -> Path:
    """Where kernels compiled by Numba's CUDA compiler are remembered (grader/compiler/)."""
    found = os.environ.get("ZEROGPU_COMPILE_CACHE")
    if found:
        return Path(found)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "zerogpu" / "compiled"


class DataDirError(RuntimeError):
    """A file the grader needs could not be written: the message says which and what to do."""


def data_dir() -> Path:
    if os.environ.get("ZEROGPU_HOME"):
        return Path(os.environ["ZEROGPU_HOME"])
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "zerogpu"


def cannot_write(path: Path, err: Exception) -> DataDirError:
    """The one-line error for a write that `err` refused."""
    if getattr(err, "errno", None) == errno.ENOSPC or "full" in str(err):
        advice = "free some disk space there"
    else:
        advice = "make it writable, or set ZEROGPU_HOME to a folder you can write"
    return DataDirError(f"cannot write {path}: {getattr(err, 'strerror', None) or err}; {advice}.")


def _temporary_beside(path: Path, text: str, mode: int) -> Path:
    """A complete copy of `text` under a temporary name in `path`'s folder, on disk."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as err:
        raise cannot_write(path, err) from None
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise cannot_write(path, err) from None
    return Path(tmp)


def write_atomically(path: Path, text: str, mode: int = 0o644) -> None:
    """Replace `path` with `text` in one step (temporary file, then rename)."""
    path = Path(path)
    tmp = _temporary_beside(path, text, mode)
    try:
        os.replace(tmp, path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise cannot_write(path, err) from None


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

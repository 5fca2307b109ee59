"""Reading what students hand in, as hostile input: regular files only, never through a link.

A class folder (or nbgrader's `submitted/`) is the instructor's; everything below it is the
students'. Below it, every folder is opened with O_NOFOLLOW relative to its parent's descriptor,
and every file is opened the same way, checked with fstat to be a regular file within its size
cap, and read once: callers get the bytes, never a path to open again, so nothing swapped in
between the check and the read is ever read. A link, a FIFO, a socket or a device is refused
with a reason that says what it is (a link's target is never read, followed or shown)."""

from __future__ import annotations

import errno
import os
import stat
from contextlib import contextmanager
from pathlib import Path

PY_LIMIT = 1 << 20
"""The largest .py hand-in read (1 MiB): the longest solution is under 10 KiB."""
NOTEBOOK_LIMIT = 16 << 20
"""The largest notebook read (16 MiB): room for a few plots in its outputs."""

NBGRADER_FILES = ("timestamp.txt", "submission_secret.txt")
"""Files nbgrader itself puts in a submission: never hand-ins, in a course or a class folder
copied out of one (its dot folders are left out too)."""

_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Refused(Exception):
    """A hand-in (or a folder on the way to it) that was not read; the message says why."""


class Missing(Refused):
    """Nothing there by that name."""


def limit_for(name: str) -> int:
    return NOTEBOOK_LIMIT if name.endswith(".ipynb") else PY_LIMIT


def what_it_is(mode: int) -> str:
    """What a directory entry is, in words, for a refusal."""
    if stat.S_ISLNK(mode):
        return "a symbolic link, which is never followed"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe), not a file"
    if stat.S_ISSOCK(mode):
        return "a socket, not a file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device, not a file"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def _size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB" if n >= 1 << 20 else f"{n / 1024:.0f} KiB"


def not_read(name: str, mode: int) -> str:
    """Why an entry that is no regular file was not read, with the fix when there is one."""
    fix = " (hand in the file itself)" if stat.S_ISLNK(mode) else ""
    return f"{name} is {what_it_is(mode)}: not read{fix}"


def _check(name: str, st: os.stat_result, limit: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise Refused(not_read(name, st.st_mode))
    if st.st_size > limit:
        raise Refused(
            f"{name} is {_size(st.st_size)}, over the {_size(limit)} a hand-in may be: not read (hand in the code alone)"
        )


def entries(folder: int) -> list[tuple[str, int]]:
    """(name, mode) of every entry of an open folder, sorted by name; links are not followed."""
    found = []
    for name in sorted(os.listdir(folder)):
        try:
            found.append((name, os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode))
        except FileNotFoundError:  # removed while we looked
            continue
    return found


def read_file(folder: int, name: str, limit: int | None = None) -> bytes:
    """The bytes of regular file `name` in the open `folder`, read once through a descriptor
    opened without following links; Refused otherwise (a FIFO is never opened)."""
    limit = limit_for(name) if limit is None else limit
    try:
        _check(name, os.stat(name, dir_fd=folder, follow_symlinks=False), limit)
        fd = os.open(name, _FILE, dir_fd=folder)
    except OSError as err:
        raise _refusal(name, err) from None
    try:
        _check(name, os.fstat(fd), limit)  # what was opened, not what was looked at
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as err:
        raise _refusal(name, err) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:  # grew since fstat
        raise Refused(f"{name} is over the {_size(limit)} a hand-in may be: not read")
    return data


def _refusal(name: str, err: OSError) -> Refused:
    if err.errno == errno.ELOOP:
        return Refused(not_read(name, stat.S_IFLNK))
    if err.errno == errno.ENOENT:
        return Missing(f"no {name}")
    return Refused(f"{name} could not be read ({err.strerror or err})")


@contextmanager
def opened(root: Path, parts=()):
    """A descriptor of the folder `root`/`parts`...: `root` is the instructor's path (a link
    there is the instructor's choice); each part below it must be a real folder, else Refused."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            try:
                mode = os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
                if not stat.S_ISDIR(mode):
                    raise Refused(f"{part} is {what_it_is(mode)}: nothing in it was read")
                inner = os.open(part, _FOLDER, dir_fd=fd)
            except OSError as err:
                raise _refusal(part, err) from None
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def read_below(root: Path, *parts: str) -> bytes:
    """The bytes of root/parts[0]/.../parts[-1], no part of it a link (Refused otherwise)."""
    with opened(root, parts[:-1]) as folder:
        return read_file(folder, parts[-1])


def walk(root: Path, *parts: str):
    """(relative path, mode) of everything below root/parts..., dot names left out, real
    folders entered (breadth first, no recursion: any depth), links and the rest never."""
    todo = [()]
    while todo:
        below = todo.pop(0)
        try:
            with opened(root, (*parts, *below)) as folder:
                listing = entries(folder)
        except Refused:
            continue  # swapped for something else since it was listed
        for name, mode in listing:
            if name.startswith("."):
                continue
            yield "/".join((*below, name)), mode
            if stat.S_ISDIR(mode):
                todo.append((*below, name))

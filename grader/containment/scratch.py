"""Folders a check writes into, and a clean-up that no tree a submission leaves can break.

`shutil.rmtree` recurses once per level (3,000 nested folders raise RecursionError), stops at a
folder without write permission, and `TemporaryDirectory.cleanup` uses it. `remove_tree` walks
the tree with a list instead of the call stack, holding one open folder at a time (paths that
deep pass PATH_MAX, so it works from folder descriptors, not paths); it makes folders it owns
writable before emptying them, and it removes links without following them.
"""

from __future__ import annotations

import os
import stat
import tempfile

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path) -> None:
    """Remove `path` and everything under it; a link (at the top too) is removed, never
    followed. Nothing there: nothing to do. Raises OSError only for what cannot be removed by
    its owner (a mount point, a file of another user in a folder we cannot write)."""
    path = os.fspath(path)
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
            return
    except FileNotFoundError:
        return
    folder = _open_folder(path, None)
    pending: list = []
    """Folders still to remove in `folder`; when none are left it is listed again."""
    above: list = []
    """For each folder between `path` and `folder`: (its holder's pending folders, its name,
    its holder's identity)."""
    try:
        while True:
            pending = pending or _empty_but_folders(folder)
            if pending:
                child = pending.pop()
                inner = _open_folder(child, folder)
                above.append((pending, child, _identity(folder)))
                os.close(folder)
                folder, pending = inner, []
            elif above:
                pending, name, holder = above.pop()
                outer = os.open("..", _DIRECTORY, dir_fd=folder)
                os.close(folder)
                folder = outer
                if _identity(folder) != holder:  # moved meanwhile: the walk would go elsewhere
                    raise OSError(f"{path}: a folder was moved while it was being removed")
                os.rmdir(name, dir_fd=folder)
            else:
                break
    finally:
        os.close(folder)
    os.rmdir(path)


def _identity(fd: int) -> tuple:
    found = os.fstat(fd)
    return found.st_dev, found.st_ino


def _open_folder(name: str, parent: int | None) -> int:
    """A descriptor of the folder `name` (in `parent`), made readable, writable and searchable
    for its owner first if it was not (a submission may leave a folder mode 000)."""
    try:
        fd = os.open(name, _DIRECTORY, dir_fd=parent)
    except PermissionError:
        os.chmod(name, stat.S_IRWXU, dir_fd=parent)
        fd = os.open(name, _DIRECTORY, dir_fd=parent)
    mode = os.fstat(fd).st_mode
    if mode & stat.S_IRWXU != stat.S_IRWXU:
        try:
            os.fchmod(fd, mode | stat.S_IRWXU)
        except PermissionError:
            pass  # not ours: the removals below say what is left
    return fd


def _empty_but_folders(folder: int) -> list:
    """Unlink every entry of `folder` that is not a folder (files, links, sockets...); the
    names of the folders left in it."""
    while True:
        folders, unlinked = [], False
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.name)
                else:
                    os.unlink(entry.name, dir_fd=folder)
                    unlinked = True
        if not unlinked:  # a listing that changed under it may have missed a name: look again
            return folders


class TemporaryFolder:
    """`tempfile.TemporaryDirectory`, removed with `remove_tree` (its own clean-up uses
    shutil.rmtree): `.name`, `.cleanup()`, and a context manager."""

    def __init__(self, prefix: str = "zerogpu-"):
        self.name = tempfile.mkdtemp(prefix=prefix)

    def cleanup(self) -> None:
        remove_tree(self.name)

    def __enter__(self) -> str:
        return self.name

    def __exit__(self, *exc) -> None:
        self.cleanup()

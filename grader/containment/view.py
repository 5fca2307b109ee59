"""What a sandboxed child sees (grader/containment/sandbox.py): an allow-list, not the host's
`/` with holes.

Inside there is only, read-only:
- /zerogpu/venv: a Python environment of its own, whose site-packages hold the packages a check
  needs (numpy, numba, llvmlite, numba-cuda, the cuda-* and nvidia-* packages, and what they
  require), and nothing else of the grader's environment;
- /zerogpu/grader, the grader package, and /zerogpu/kernels/<id>.py, the exercise's spec files
  (`shown` files of the project appear at their place under /zerogpu);
- the interpreter's base installation (its standard library) at its own path, and the system's
  shared libraries (`SYSTEM_LIBRARIES`);
plus the task folder, /tmp, a minimal /dev and a fresh /proc (sandbox.py).

A bind mount's source shows in /proc/self/mountinfo whatever its mount point, so what comes from
the project (the grader, spec files, a venv in .venv) is bound from a staged copy: hard links
in a folder of the system's temporary folder, made once per grading process (the grader's own
files are copied where links cannot be made; packages on another file system than every
temporary folder are bound from where they are).
"""

from __future__ import annotations

import atexit
import errno
import os
import re
import shutil
import site
import sys
import tempfile
import threading
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from grader.containment.scratch import remove_tree
from grader.paths import ROOT

INSIDE = "/zerogpu"
"""Where the project's part of the view is mounted: a name that says nothing of the host."""
VENV = f"{INSIDE}/venv"
PYTHON = f"{VENV}/bin/python"
SITE_PACKAGES = f"{VENV}/lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
TASK = f"{INSIDE}/task"
PACKAGES = ("numpy", "numba", "llvmlite", "numba-cuda")
PACKAGE_FAMILIES = ("cuda-", "nvidia-")
"""Distributions whose names start so: CUDA's Python bindings and its pip-installed libraries."""
SYSTEM_LIBRARIES = (
    "/usr/lib",
    "/usr/lib32",
    "/usr/lib64",
    "/usr/libx32",
    "/usr/local/lib",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/ld.so.cache",
)
"""What the dynamic loader needs (where it exists); a link (merged /usr) stays a link."""
STAGE_PREFIX = "zerogpu-view-"


def _name(dist) -> str:
    return re.sub(r"[-_.]+", "-", dist.metadata["Name"] or "").lower()


def _required(dist) -> list:
    """The names of what `dist` requires whatever extras were asked for (a requirement with an
    `extra` marker is only wanted if it is installed, which `needed_distributions` sees)."""
    names = []
    for line in dist.requires or []:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            names.append(re.sub(r"[-_.]+", "-", req.name).lower())
    return names


def needed_distributions() -> list:
    """The installed distributions a check needs: `PACKAGES`, every `PACKAGE_FAMILIES` one,
    and what they require, each once (the first on sys.path, as imports find it)."""
    installed = {}
    for dist in metadata.distributions():
        installed.setdefault(_name(dist), dist)
    todo = [n for n in installed if n in PACKAGES or n.startswith(PACKAGE_FAMILIES)]
    found = {}
    while todo:
        name = todo.pop()
        if name in installed and name not in found:
            found[name] = installed[name]
            todo += _required(installed[name])
    return sorted(found.values(), key=_name)


def _package_files(dists) -> dict:
    """site-packages-relative path -> host path of every file the distributions installed."""
    files = {}
    for dist in dists:
        base = Path(dist.locate_file(""))
        for file in dist.files or ():
            if not file.parts or file.parts[0] == "..":  # scripts in bin/, not importable
                continue
            files.setdefault(str(file), str(base / file))
    return files


def _link_or_copy(source: str, target: str, copy: bool, made: set) -> None:
    """`target` as a hard link to `source` (a copy where no link can be made, with `copy`);
    `made`: the folders made so far (making each once is most of the time on a slow disk)."""
    folder = os.path.dirname(target)
    if folder not in made:
        os.makedirs(folder, exist_ok=True)
        made.add(folder)
    try:
        os.link(source, target, follow_symlinks=False)
    except FileExistsError:
        pass  # another thread staged this very file (a spec shown to two checks at once)
    except OSError:
        if not copy:
            raise
        # whole or not at all: another thread may bind `target` as soon as it exists
        partial = f"{target}.{os.getpid()}.{threading.get_ident()}.partial"
        shutil.copy2(source, partial, follow_symlinks=False)
        os.replace(partial, target)


@dataclass(frozen=True)
class Stage:
    """The staged part of the view, on the host: binds (host path, path inside)."""

    folder: Path
    binds: tuple

    @property
    def empty(self) -> Path:
        """An empty folder, bound over places of the host the view must not show."""
        return self.folder / "empty"

    def shown(self, path: str) -> tuple:
        """(host path to bind, path inside) for a file the view shows: a project file is staged
        (each version of it once) and mounted at its place under INSIDE; any other file at its
        own path."""
        path = os.path.realpath(path)
        if not path.startswith(str(ROOT) + os.sep):
            return path, path
        relative = os.path.relpath(path, ROOT)
        found = os.stat(path)
        staged = self.folder / "files" / f"{found.st_ino}-{found.st_mtime_ns}" / relative
        if not staged.exists():
            _link_or_copy(path, str(staged), copy=True, made=set())
        return str(staged), f"{INSIDE}/{relative}"


def _new_folder() -> Path:
    """A folder for this process's stage, on the same file system as the packages where one
    of the temporary folders is (then hard links work). Left behind by a killed grader, it is
    removed by the next one."""
    packages = os.stat(os.path.dirname(metadata.distribution("numba").locate_file("numba")))
    candidates = [tempfile.gettempdir(), "/var/tmp"]
    same = [c for c in candidates if os.path.isdir(c) and os.stat(c).st_dev == packages.st_dev]
    parent = (same or candidates)[0]
    _remove_leftovers(parent)
    return Path(tempfile.mkdtemp(prefix=f"{STAGE_PREFIX}{os.getpid()}-", dir=parent))


def _remove_leftovers(parent: str) -> None:
    for path in Path(parent).glob(f"{STAGE_PREFIX}*"):
        pid = path.name[len(STAGE_PREFIX) :].split("-")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists() and path.stat().st_uid == os.getuid():
            try:
                remove_tree(path)
            except OSError:
                pass  # another grader may be removing it too


def _stage_packages(folder: Path) -> list:
    """Binds of the needed packages: one staged site-packages of hard links, or, where links
    cannot be made, each package's top-level folder or file from where it is."""
    files = _package_files(needed_distributions())
    staged, made = str(folder / "site-packages"), set()
    try:
        for relative, source in files.items():
            if os.path.lexists(source):
                _link_or_copy(source, os.path.join(staged, relative), copy=False, made=made)
        return [(staged, SITE_PACKAGES)]
    except OSError as err:
        if err.errno not in (errno.EXDEV, errno.EPERM, errno.EACCES, errno.EMLINK):
            raise
        remove_tree(staged)
    tops = {}
    for relative, source in files.items():
        top = relative.split("/")[0]
        tops.setdefault(top, source[: len(source) - len(relative)] + top)
    return [(source, f"{SITE_PACKAGES}/{top}") for top, source in sorted(tops.items()) if os.path.lexists(source)]


def _stage_grader(folder: Path) -> list:
    """The grader package, copied file by file (hard links where they work)."""
    source, staged, made = str(ROOT / "grader"), str(folder / "grader"), set()
    for place, _, names in os.walk(source):
        for name in names:
            path = os.path.join(place, name)
            _link_or_copy(path, staged + path[len(source) :], copy=True, made=made)
    return [(staged, f"{INSIDE}/grader")]


def _python(folder: Path) -> list:
    """The interpreter as /zerogpu/venv/bin/python, with a pyvenv.cfg naming its base
    installation, which is bound at its own path (its shared library is found by that path),
    its own site-packages covered by an empty folder."""
    executable = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    base = os.path.realpath(sys.base_prefix)
    (folder / "pyvenv.cfg").write_text(f"home = {os.path.dirname(executable)}\ninclude-system-site-packages = false\n")
    (folder / "empty").mkdir()
    binds = [(executable, PYTHON), (base, base), (str(folder / "pyvenv.cfg"), f"{VENV}/pyvenv.cfg")]
    if not executable.startswith(base + os.sep):
        binds.append((os.path.dirname(executable), os.path.dirname(executable)))
    for place in site.getsitepackages([base]):
        if os.path.isdir(place):
            binds.append((str(folder / "empty"), os.path.realpath(place)))
    return binds


_stages: dict = {}
"""Process id -> its Stage (a forked process makes its own: the first one's is removed when
that process exits)."""
_stages_lock = threading.Lock()


def stage() -> Stage:
    """This process's stage, made on first use (by whichever thread starts a sandbox first)."""
    pid = os.getpid()
    with _stages_lock:
        if pid not in _stages:
            folder = _new_folder()
            atexit.register(_remove_own, folder, pid)
            binds = _python(folder) + _stage_grader(folder) + _stage_packages(folder)
            _stages[pid] = Stage(folder, tuple(binds))
        return _stages[pid]


def _remove_own(folder: Path, pid: int) -> None:
    if os.getpid() == pid:
        try:
            remove_tree(folder)
        except OSError:
            pass  # left for the next grader (_remove_leftovers)


def system_binds() -> list:
    """bwrap arguments for `SYSTEM_LIBRARIES`: links as links, the rest read-only."""
    args = []
    for path in SYSTEM_LIBRARIES:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            args += ["--ro-bind", path, path]
    return args

"""Clean-up of what a check leaves (grader/containment/scratch.py): no tree shape breaks it."""

import os
import socket
import stat
import tempfile
from pathlib import Path

import pytest

from grader.containment.scratch import TemporaryFolder, remove_tree

DEEP = 3000
"""Three times Python's recursion limit, and paths past PATH_MAX (4096 bytes)."""


@pytest.fixture
def place(tmp_path):
    """A folder on a memory file system where there is one: a disk may take milliseconds per
    folder made and removed."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        folder = Path(tempfile.mkdtemp(prefix="zerogpu-test-scratch-", dir=shm))
        yield folder
        remove_tree(folder)
    else:
        yield tmp_path


def nest(top: Path, depth: int, name: str = "d") -> None:
    """`depth` folders, each inside the last, made relative to a descriptor (the path is too long)."""
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        with open(os.open("last.txt", os.O_WRONLY | os.O_CREAT, dir_fd=fd), "w") as f:
            f.write("bottom")
    finally:
        os.close(fd)


def test_thousands_of_nested_folders_are_removed(place):
    """Is a tree deeper than the recursion limit and PATH_MAX removed (shutil.rmtree raises
    RecursionError on it)?"""
    top = place / "task"
    top.mkdir()
    nest(top, DEEP)
    remove_tree(top)
    assert not top.exists()


def test_links_are_removed_never_followed(place):
    """Is a link (to a folder, to a file, dangling, at the top) removed and what it points to left?"""
    outside = place / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    top = place / "task"
    (top / "inner").mkdir(parents=True)
    (top / "inner" / "to-folder").symlink_to(outside)
    (top / "to-file").symlink_to(outside / "keep.txt")
    (top / "dangling").symlink_to(place / "nothing")
    (top / "up").symlink_to("..")
    remove_tree(top)
    assert not top.exists() and (outside / "keep.txt").read_text() == "keep"
    (place / "top-link").symlink_to(outside)
    remove_tree(place / "top-link")
    assert not (place / "top-link").exists() and (outside / "keep.txt").exists()


def test_folders_without_permissions_and_odd_files_are_removed(place):
    """Are folders left mode 000 or read-only, with files inside, and sockets and pipes, removed?"""
    top = place / "task"
    locked = top / "a" / "locked"
    locked.mkdir(parents=True)
    (locked / "f.txt").write_text("x")
    read_only = top / "read-only"
    read_only.mkdir()
    (read_only / "g.txt").write_text("y")
    os.mkfifo(top / "pipe")
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(top / "sock"))
    os.chmod(read_only, stat.S_IRUSR | stat.S_IXUSR)
    os.chmod(locked, 0)
    os.chmod(top / "a", stat.S_IRUSR | stat.S_IXUSR)
    remove_tree(top)
    assert not top.exists()


def test_many_folders_side_by_side_are_removed(place):
    top = place / "task"
    top.mkdir()
    for i in range(2000):
        (top / f"f{i}").mkdir()
        (top / f"f{i}" / "x").write_text("")
    remove_tree(top)
    assert not top.exists()


def test_a_file_or_nothing_at_the_path(place):
    (place / "file").write_text("x")
    remove_tree(place / "file")
    remove_tree(place / "nothing")
    assert not (place / "file").exists()


def test_a_temporary_folder_cleans_up_what_no_rmtree_could(place, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(place))
    with TemporaryFolder(prefix="zerogpu-") as name:
        nest(Path(name), DEEP)
    assert not Path(name).exists()


def test_a_check_whose_task_folder_holds_thousands_of_nested_folders_gives_its_result(place, monkeypatch):
    """The clean-up after a check removes the task folder, whatever a submission that got past
    the policy and the guard left in it, and the check still gives its outcomes."""
    from grader.checking.check import plans_wanted
    from grader.children import run as runs
    from grader.children.recording import record_in_child
    from grader.children.task import ReplayTask
    from grader.replay.sources import hand_in_of
    from grader.exercises import exercise
    from grader.steps.cases import prepare

    monkeypatch.setattr(tempfile, "tempdir", str(place))  # task folders there
    made, follow = [], runs.follow

    def follow_then_nest(proc, task_dir, *args, **kwargs):
        made.append(Path(task_dir))
        nest(Path(task_dir) / "work", DEEP)  # what the child left behind
        return follow(proc, task_dir, *args, **kwargs)

    monkeypatch.setattr(runs, "follow", follow_then_nest)
    ex = exercise("vector_add")
    prepared = prepare(ex, 5)[:2]
    message = record_in_child(ex, hand_in_of(ex.solution_file), plans_wanted(ex, prepared), 30)
    run = runs.run_in_child(ReplayTask(ex, hand_in_of(ex.solution_file), message, tuple(prepared), 30))
    assert run.stopped is None and sorted(run.outcomes) == [p.index for p in prepared], run.detail
    assert made and not made[0].exists()

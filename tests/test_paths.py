"""First use of the data dir: files created by many processes at once, and writes refused."""

import errno
import os
import subprocess
import sys
import threading

import pytest

from grader.paths import ROOT, DataDirError, cannot_write, create_once, read_json, write_atomically

RACER = """
import sys, time
from pathlib import Path
from grader.paths import create_once
start = float(sys.argv[2])
while time.time() < start:
    pass
print(create_once(Path(sys.argv[1]), lambda: sys.argv[3] + "\\n").strip())
"""


def test_racing_processes_all_read_the_one_file_that_won(tmp_path):
    """Do 8 processes that create the same file at the same instant all get one text?"""
    import time

    target = tmp_path / "data" / "grading-secret"
    start = time.time() + 2.0  # every racer imported and spinning by then
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(target), str(start), f"text-{k}"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for k in range(8)
    ]
    texts = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert len(set(texts)) == 1 and texts[0].startswith("text-")
    assert target.read_text().strip() == texts[0]
    assert [p.name for p in target.parent.iterdir()] == ["grading-secret"], "no temporary file left"
    assert target.stat().st_mode & 0o777 == 0o600


def test_racing_threads_never_read_an_empty_or_partial_file(tmp_path):
    """Is the file whole whenever any thread can see it?"""
    target = tmp_path / "secret"
    big = "x" * 1_000_000
    seen, barrier = [], threading.Barrier(16)

    def race():
        barrier.wait()
        seen.append(create_once(target, lambda: big))

    threads = [threading.Thread(target=race) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [big] * 16


def test_an_unwritable_data_dir_is_one_clear_error(tmp_path, monkeypatch):
    """Does a data dir that cannot exist name the path and what to do?"""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("ZEROGPU_HOME", str(blocker / "zerogpu"))
    with pytest.raises(DataDirError) as err:
        create_once(blocker / "zerogpu" / "grading-secret", lambda: "1")
    message = str(err.value)
    assert str(blocker / "zerogpu" / "grading-secret") in message and "ZEROGPU_HOME" in message
    assert "\n" not in message
    with pytest.raises(DataDirError):
        write_atomically(blocker / "x" / "device.json", "{}")


def test_graded_check_on_an_unwritable_data_dir_says_so_without_a_traceback(tmp_path):
    """Does `zerogpu check --graded` print one line and exit 2 when the secret cannot be made?"""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {k: v for k, v in os.environ.items() if k != "ZEROGPU_SECRET"}
    env["ZEROGPU_HOME"] = str(blocker / "home")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.cli",
            "check",
            "vector_add",
            str(ROOT / "solutions" / "vector_add.py"),
            "--graded",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert lines[-1] == (
        f"error: cannot write {blocker / 'home' / 'grading-secret'}: Not a directory; make it "
        "writable, or set ZEROGPU_HOME to a folder you can write."
    )
    assert len(lines) == 1 or (len(lines) == 2 and lines[0].startswith("Checking vector_add:")), lines


def refused(code: int) -> OSError:
    return OSError(code, os.strerror(code))


@pytest.mark.parametrize(
    "code, fix",
    [
        (errno.ENOSPC, "free some disk space there"),
        (errno.EDQUOT, "free some disk space there"),
        (errno.EFBIG, "raise the file-size limit (ulimit -f)"),
        (errno.EACCES, "make it writable by you"),
        (errno.EPERM, "make it writable by you"),
        (errno.ENOTDIR, "make it writable"),
    ],
)
def test_a_refused_write_names_the_path_the_reason_and_the_fix(tmp_path, monkeypatch, code, fix):
    """Is each refusal one line with the path, the system's reason, the fix, and ZEROGPU_HOME
    only for a file of the data dir (the one place that setting moves)?"""
    monkeypatch.setenv("ZEROGPU_HOME", str(tmp_path / "home"))
    in_data_dir = str(cannot_write(tmp_path / "home" / "ceilings.json", refused(code)))
    assert in_data_dir == (
        f"cannot write {tmp_path / 'home' / 'ceilings.json'}: {os.strerror(code)}; "
        f"{fix}, or set ZEROGPU_HOME to a folder you can write."
    )
    a_class = str(cannot_write(tmp_path / "class" / "gradebook.sqlite", refused(code)))
    assert "ZEROGPU_HOME" not in a_class and a_class.endswith(f"; {fix}.") and "\n" not in a_class
    flagged = str(cannot_write(tmp_path / "r.html", refused(code), "choose another folder with --out DIR"))
    assert flagged.endswith(f"; {fix}, or choose another folder with --out DIR.")


def test_a_read_only_file_system_is_told_where_else_to_write(tmp_path, monkeypatch):
    """A read-only folder cannot be made writable by its user: the advice is to write elsewhere."""
    monkeypatch.setenv("ZEROGPU_HOME", str(tmp_path / "home"))
    err = refused(errno.EROFS)
    assert str(cannot_write(tmp_path / "home" / "x", err)).endswith(
        "Read-only file system; set ZEROGPU_HOME to a folder you can write."
    )
    assert str(cannot_write(tmp_path / "c" / "x", err, "choose another folder with --out DIR")).endswith(
        "Read-only file system; choose another folder with --out DIR."
    )
    assert str(cannot_write(tmp_path / "c" / "x", err)).endswith("; write it on another file system.")


def test_an_atomic_write_never_fails_on_a_lone_surrogate(tmp_path):
    """Does a lone surrogate (an undecodable name, a learner's exception) reach the file as
    its backslash escape instead of failing the write?"""
    write_atomically(tmp_path / "f.txt", "ann\udcff and \ud800 end")
    assert (tmp_path / "f.txt").read_text(encoding="utf-8") == "ann\\udcff and \\ud800 end"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"], "no temporary file left"


def test_read_json_gives_none_for_what_is_missing_too_long_or_not_json(tmp_path):
    path = tmp_path / "a.json"
    assert read_json(path, 100) is None
    path.write_text('{"kernels": [1, 2]}')
    assert read_json(path, 100) == {"kernels": [1, 2]}
    assert read_json(path, 10) is None, "over the cap: not read on"
    path.write_text("{not json")
    assert read_json(path, 100) is None

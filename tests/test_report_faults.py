"""Fault trials for what `zerogpu report` writes: a full disk (a small tmpfs; a file-size
limit), a read-only folder, a refused permission, a report killed half way. Each ends in one
line that names the fix and no traceback, and leaves the old report whole, or none, never a
truncated file."""

import csv
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from grader.classroom.gradebook import Gradebook
from grader.cli import main
from grader.exercises import ROOT
from grader.result import CaseResult, CheckResult, Speed

STUDENTS = 12
OLD = "<!doctype html><p>last week's report</p>\n"
NAMES = ("report.html", "students.csv", "exercises.csv", "submissions.csv", "similarity.csv")
AS_ROOT = os.geteuid() == 0


def a_result(exercise: str, verdict: str) -> CheckResult:
    case = CaseResult("one block", {"n": 128}, verdict, message="" if verdict == "passed" else "element 3 is wrong")
    score = 10.0 if verdict == "passed" else 0.0
    return CheckResult(exercise, exercise, "simulator", verdict, "m", "", (case,), Speed(False), score, 10.0, None)


@pytest.fixture(scope="module")
def gradebook(tmp_path_factory) -> Path:
    book = Gradebook(tmp_path_factory.mktemp("class") / "gradebook.sqlite")
    for s in range(STUDENTS):
        for exercise, verdict in (("thread_ids", "passed"), ("vector_add", "wrong_result"), ("saxpy", "exception")):
            book.record(f"s{s:02}", exercise, "sha", a_result(exercise, verdict))
    return book.path


def old_report(folder: Path) -> None:
    folder.mkdir(exist_ok=True)
    for name in NAMES:
        (folder / name).write_text(OLD)


def assert_whole_or_old(folder: Path) -> None:
    """Every file is last week's, or this run's and complete; no temporary file remains."""
    assert not [p.name for p in folder.iterdir() if p.name not in NAMES], "a temporary file was left"
    for name in NAMES:
        text = (folder / name).read_text(encoding="utf-8")
        if text == OLD:
            continue
        if name == "report.html":
            assert text.rstrip().endswith("</html>"), "a truncated report"
        else:
            rows = list(csv.reader(text.splitlines()))
            least = 1 if name == "similarity.csv" else 2  # no pair: its header alone
            assert len(rows) >= least and len({len(r) for r in rows}) == 1, f"a truncated {name}"


def one_error_line(err: str, *needles: str) -> str:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@contextmanager
def tmpfs(path: Path, options: str):
    """A tmpfs at `path` for the test's life (needs root, as CI has)."""
    if not AS_ROOT:
        pytest.skip("mounting a tmpfs needs root (CI runs as root)")
    path.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True, text=True
    )
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def report(gradebook: Path, out: Path, capsys) -> tuple[int, str]:
    code = main(["report", "--db", str(gradebook), "--out", str(out)])
    return code, capsys.readouterr().err


def test_a_full_disk_keeps_the_old_report_whole(gradebook, tmp_path, capsys):
    """A 64 KiB tmpfs holds the CSVs but not the page: one line, the page last week's."""
    with tmpfs(tmp_path / "disk", "size=64k") as out:
        old_report(out)
        code, err = report(gradebook, out, capsys)
        assert code == 2
        one_error_line(err, f"cannot write {out / 'report.html'}", "No space left on device", "--out DIR")
        assert (out / "report.html").read_text() == OLD
        assert_whole_or_old(out)


def test_a_file_size_limit_is_one_line_and_no_truncated_page(gradebook, tmp_path):
    """The same with RLIMIT_FSIZE (no root needed): the page is refused whole, with the fix."""
    out = tmp_path / "out"
    old_report(out)
    limited = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (64_000, 64_000)); "
        "from grader.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    command = [sys.executable, "-c", limited, "report", "--db", str(gradebook), "--out", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    one_error_line(done.stderr, "File too large", "ulimit -f", "--out DIR")
    assert (out / "report.html").read_text() == OLD
    assert_whole_or_old(out)


@pytest.mark.parametrize("inside", ["", "new folder"], ids=["the folder itself", "a folder to make there"])
def test_a_read_only_folder_is_one_line_naming_out(gradebook, tmp_path, capsys, inside):
    with tmpfs(tmp_path / "ro", "ro,size=64k") as mount:
        out = mount / inside if inside else mount
        code, err = report(gradebook, out, capsys)
        assert code == 2
        one_error_line(err, "cannot write", str(out), "Read-only file system", "choose another folder with")
        assert list(mount.iterdir()) == []


def test_a_folder_without_write_permission_is_one_line(gradebook, tmp_path):
    """As a user who may not write the report folder (root without its override capability)."""
    out = tmp_path / "shared"
    old_report(out)
    out.chmod(0o555)
    command = [sys.executable, "-m", "grader.cli", "report", "--db", str(gradebook), "--out", str(out)]
    if AS_ROOT:
        if not shutil.which("setpriv"):
            pytest.skip("root writes anywhere, and setpriv (to drop that) is missing")
        command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--", *command]
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    finally:
        out.chmod(0o755)
    assert done.returncode == 2, done.stdout + done.stderr
    one_error_line(done.stderr, "Permission denied", "make it writable by you", "--out DIR")
    assert_whole_or_old(out)


KILLED = """
import os, sys, time

from grader.cli import main

def pause(what):
    print(what, flush=True)
    time.sleep(600)

if sys.argv[1] == "before-rename":  # the page written whole under its temporary name
    real_fsync = os.fsync

    def fsync(fd):
        real_fsync(fd)
        if ".report.html." in os.readlink(f"/proc/self/fd/{fd}"):
            pause("written")

    os.fsync = fsync
else:  # half of the page's text written
    real_fdopen = os.fdopen

    class HalfWay:
        def __init__(self, fh):
            self.fh = fh
        def __enter__(self):
            return self
        def __exit__(self, *exc):
            return self.fh.__exit__(*exc)
        def __getattr__(self, name):
            return getattr(self.fh, name)
        def write(self, text):
            self.fh.write(text[: len(text) // 2])
            self.fh.flush()
            if "</html>" in text:
                pause("half")
            self.fh.write(text[len(text) // 2 :])

    os.fdopen = lambda *a, **k: HalfWay(real_fdopen(*a, **k))
sys.exit(main(["report", "--db", sys.argv[2], "--out", sys.argv[3]]))
"""


@pytest.mark.parametrize(
    "moment, before",
    [("half-way", "last week's report"), ("before-rename", "no report yet")],
    ids=["kill -9 half way through the page", "kill -9 before the rename"],
)
def test_a_report_killed_mid_write_leaves_the_old_one_whole_or_none(gradebook, tmp_path, capsys, moment, before):
    out = tmp_path / "out"
    if before == "last week's report":
        old_report(out)
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED, moment, str(gradebook), str(out)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        ready, _, _ = select.select([child.stdout], [], [], 120)
        assert ready and child.stdout.readline().strip() in ("half", "written"), child.stderr.read()
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait(30)
    page = out / "report.html"
    assert page.read_text() == OLD if before == "last week's report" else not page.exists()
    left = list(out.glob(".report.html.*.tmp"))
    assert len(left) == 1, "the killed write's temporary file, nothing else"
    # the next report removes what the killed one left (once it is clearly abandoned)
    stale = time.time() - 3600
    os.utime(left[0], (stale, stale))
    code, _ = report(gradebook, out, capsys)
    assert code == 0 and not left[0].exists()
    assert page.read_text().rstrip().endswith("</html>")
    assert_whole_or_old(out)


def test_a_gradebook_in_a_read_only_folder_is_reported(gradebook, tmp_path, capsys):
    """A class folder the instructor may only read (a read-only mount): the report reads its
    gradebook as it stands and writes where --out says."""
    with tmpfs(tmp_path / "class", "size=4m") as folder:
        shutil.copy(gradebook, folder / "gradebook.sqlite")
        remounted = subprocess.run(["mount", "-o", "remount,ro", str(folder)], capture_output=True, text=True)
        if remounted.returncode:
            pytest.skip(f"cannot remount read-only here: {remounted.stderr.strip()}")
        code, err = report(folder / "gradebook.sqlite", tmp_path / "out", capsys)
        assert code == 0, err
        assert_whole_or_old(tmp_path / "out")
        assert sorted(p.name for p in folder.iterdir()) == ["gradebook.sqlite"]

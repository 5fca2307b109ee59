"""The child's second wall: the audit-hook guard, the scrubbed environment, the limits."""

import subprocess
import sys
import textwrap

from grader.exercises import ROOT
from grader.containment.guard import scrubbed_env


def run_guarded(tmp_path, body):
    """Run `body` in a fresh Python after installing a Guard like the child does."""
    private = tmp_path / "private"
    private.mkdir()
    (private / "secret.txt").write_text("42")
    code = textwrap.dedent(f"""
        from grader.containment.guard import Guard
        guard = Guard([{str(private)!r}], {str(tmp_path)!r})
        guard.install()
        try:
            {body}
            print("ALLOWED")
        except PermissionError as exc:
            print("REFUSED", exc)
        with guard.writing():
            open({str(tmp_path / 'grader-own.txt')!r}, "w").write("ok")
        print("GRADER WROTE")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    return proc.stdout


def test_reading_a_private_file_is_refused(tmp_path):
    out = run_guarded(tmp_path, f"open({str(tmp_path / 'private' / 'secret.txt')!r}).read()")
    assert "REFUSED" in out and "GRADER WROTE" in out


def test_writing_any_file_is_refused_but_the_grader_may(tmp_path):
    out = run_guarded(tmp_path, f"open({str(tmp_path / 'outcome-0.json')!r}, 'w').write('x')")
    assert "REFUSED" in out and "GRADER WROTE" in out
    assert not (tmp_path / "outcome-0.json").exists()


def test_only_the_thread_inside_writing_may_write(tmp_path):
    """The child's lookout thread writes its answer while the submission runs in the main
    thread: the submission's writes stay refused meanwhile."""
    target = tmp_path / "outcome-0.json"
    body = (
        "import threading; inside, done = threading.Event(), threading.Event(); grader_writes = guard.writing(); "
        "threading.Thread(target=lambda: [grader_writes.__enter__(), inside.set(), done.wait()], daemon=True).start(); "
        f"inside.wait(); open({str(target)!r}, 'w').write('x')"
    )
    out = run_guarded(tmp_path, body)
    assert "REFUSED" in out and "GRADER WROTE" in out
    assert not target.exists()


def test_starting_a_process_is_refused(tmp_path):
    out = run_guarded(tmp_path, "import subprocess; subprocess.run(['true'])")
    assert "REFUSED" in out


def test_forking_is_refused(tmp_path):
    out = run_guarded(tmp_path, "import os; os.fork()")
    assert "REFUSED" in out


def test_deleting_is_refused(tmp_path):
    (tmp_path / "keep.txt").write_text("x")
    out = run_guarded(tmp_path, f"import os; os.remove({str(tmp_path / 'keep.txt')!r})")
    assert "REFUSED" in out and (tmp_path / "keep.txt").exists()


def test_reading_library_files_still_works(tmp_path):
    """numba and numpy must still import lazily under the guard."""
    out = run_guarded(tmp_path, "import json, decimal")
    assert "ALLOWED" in out


def test_child_environment_carries_no_secret(monkeypatch, tmp_path):
    monkeypatch.setenv("ZEROGPU_SECRET", "s3cret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "nope")
    env = scrubbed_env(tmp_path, ROOT, "simulator")
    assert "ZEROGPU_SECRET" not in env and "AWS_SECRET_ACCESS_KEY" not in env
    assert env["HOME"] == str(tmp_path) and env["ZEROGPU_BACKEND"] == "simulator"

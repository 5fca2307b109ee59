"""The operating system's wall (grader/containment/sandbox.py), tested for real: a probe
script, not held back by the static policy or the guard, runs inside the very bwrap command a
graded child gets and reports what it could reach."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.checking.isolate import contained
from grader.containment import process_cap, sandbox
from grader.containment.guard import scrubbed_env
from grader.paths import ROOT

pytestmark = pytest.mark.skipif(sandbox.unavailable() is not None, reason=str(sandbox.unavailable()))

PROBE = r'''
import ctypes, errno, json, os, socket, subprocess, sys, time
out = {}
pids = [p for p in os.listdir("/proc") if p.isdigit()]
out["pids"] = pids
environs = b""
for p in pids:
    try:
        environs += open(f"/proc/{p}/environ", "rb").read()
    except OSError:
        pass
out["environs"] = environs.decode(errors="replace")
out["env"] = dict(os.environ)
def tries(f):
    try:
        f()
        return "ok"
    except Exception as e:
        return type(e).__name__
out["solution"] = tries(lambda: open(sys.argv[1]).read())
def read_secret():
    out["secret_text"] = open(sys.argv[2]).read()
out["secret_file"] = tries(read_secret)
out["connect"] = tries(lambda: socket.create_connection(("127.0.0.1", int(sys.argv[3])), timeout=2))
out["write_root"] = tries(lambda: open(sys.argv[4], "w").write("x"))
out["write_tmp_host"] = tries(lambda: open("/var/tmp/zerogpu-escape", "w").write("x"))
open(os.path.join(sys.argv[5], "inside"), "w").write("x")
libc = ctypes.CDLL(None, use_errno=True)
out["ptrace"] = (libc.ptrace(0, 0, 0, 0), ctypes.get_errno())
out["unshare"] = (libc.unshare(0x20000), ctypes.get_errno())
# a daemon in a new session that would outlive the check
if os.fork() == 0:
    os.setsid()
    os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", sys.argv[6]])
print(json.dumps(out))
'''


def _run(tmp_path):
    task = tmp_path / "task"
    (task / "work").mkdir(parents=True)
    probe = task / "probe.py"
    probe.write_text(PROBE)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    token = f"zerogpu-leftover-{os.getpid()}-{tmp_path.name}"
    env = scrubbed_env(task / "work", ROOT, "simulator")
    secret_file = tmp_path / "grading-secret"
    secret_file.write_text("s3cr3t-file\n")
    contain = contained("vector_add", private=[str(secret_file)])  # the probe plays the submission
    fd = sandbox.seccomp_fd()
    try:
        command = sandbox.command(
            [
                sys.executable,
                str(probe),
                str(ROOT / "solutions" / "vector_add.py"),
                str(secret_file),
                str(listener.getsockname()[1]),
                str(ROOT / "escape"),
                str(task),
                token,
            ],
            task,
            env,
            fd=fd,
            **contain,
        )
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=60, pass_fds=(fd,), env=env
        )  # as isolate.py starts it: bwrap's own environment is the child's
    finally:
        os.close(fd)
        listener.close()
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), token, task


def test_the_child_is_walled_in(tmp_path, monkeypatch):
    monkeypatch.setenv("ZEROGPU_SECRET", "s3cr3t-env")  # in this process's environment, as a grader's
    out, token, task = _run(tmp_path)
    assert len(out["pids"]) <= 3, out["pids"]  # bwrap's init, the probe: no process of the host
    assert "s3cr3t" not in out["environs"] and "s3cr3t" not in json.dumps(out["env"])
    assert out["solution"] == "FileNotFoundError"
    assert out["secret_file"] != "ok" or out["secret_text"] == ""
    assert out["connect"] in ("ConnectionRefusedError", "OSError", "TimeoutError"), out["connect"]
    assert out["write_root"] == "OSError" and not (ROOT / "escape").exists()
    assert out["write_tmp_host"] in ("OSError", "PermissionError")
    assert not Path("/var/tmp/zerogpu-escape").exists()
    assert (task / "inside").exists()  # the task folder is the one writable place
    assert out["ptrace"] == [-1, 1] and out["unshare"] == [-1, 1]  # seccomp: EPERM


def _left(token: str) -> list:
    """Processes whose command line holds `token`."""
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if token.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                left.append(pid)
        except OSError:
            pass
    return left


def test_no_process_outlives_the_sandbox(tmp_path):
    _, token, _ = _run(tmp_path)
    assert not _left(token)


def test_the_secret_is_removed_from_the_environment_when_read(monkeypatch):
    from grader.steps.cases import load_secret

    monkeypatch.setenv("ZEROGPU_SECRET", "s3cr3t-env")
    first = load_secret()
    assert "ZEROGPU_SECRET" not in os.environ
    assert load_secret() == first  # still the same secret for the next check


def test_bwrap_missing_gives_one_line(monkeypatch):
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    sandbox.unavailable.cache_clear()
    try:
        reason = sandbox.unavailable()
    finally:
        sandbox.unavailable.cache_clear()
    assert "bubblewrap" in reason and "--unsandboxed" in reason and "\n" not in reason


FORK_BOMB = r"""
import ctypes, os, sys, time
from grader.containment.process_cap import limit_own_processes
limit_own_processes(int(sys.argv[1]))  # as the graded child does, before the submission runs
libc = ctypes.CDLL(None, use_errno=True)  # native fork: no audit hook sees it
forked = 0
while forked < 10 * int(sys.argv[1]):
    pid = libc.fork()
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    if pid < 0:
        break
    forked += 1
print(forked, flush=True)
"""


def test_a_fork_bomb_stops_at_the_process_cap(tmp_path):
    cap = 64
    cgroup = process_cap.new_cgroup(cap)
    if cgroup is None and os.geteuid() == 0:
        pytest.skip("as root, only a pids cgroup caps processes, and none can be made here")
    task = tmp_path / "task"
    (task / "work").mkdir(parents=True)
    (task / "bomb.py").write_text(FORK_BOMB)
    token = f"zerogpu-bomb-{os.getpid()}-{tmp_path.name}"
    env = scrubbed_env(task / "work", ROOT, "simulator")
    fd = sandbox.seccomp_fd()
    try:
        command = sandbox.command(
            [sys.executable, str(task / "bomb.py"), str(cap), token], task, env, fd=fd, hidden=(), shown_files=()
        )
        if cgroup is not None:
            command = process_cap.enter_then_exec(command, cgroup)
        started = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, pass_fds=(fd,), env=env)
    finally:
        os.close(fd)
        if cgroup is not None:
            process_cap.remove_cgroup(cgroup)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) < cap  # fork failed at the cap; the bomb's children sleep 60 s...
    assert time.monotonic() - started < 30  # ...and went with the sandbox
    assert not _left(token)


def test_where_no_kernel_limit_holds_the_sandbox_is_counted_from_outside(tmp_path):
    """As root without a pids cgroup (RLIMIT_NPROC binds no root), the grader counts the
    sandbox's processes (process_cap.NamespaceWatch) and ends it past the cap."""
    cap = 64
    task = tmp_path / "task"
    (task / "work").mkdir(parents=True)
    bomb = FORK_BOMB.replace("limit_own_processes(int(sys.argv[1]))", "pass")
    (task / "bomb.py").write_text(bomb.replace("print(forked, flush=True)", "time.sleep(60)"))
    token = f"zerogpu-watched-{os.getpid()}-{tmp_path.name}"
    env = scrubbed_env(task / "work", ROOT, "simulator")
    fd = sandbox.seccomp_fd()
    try:
        command = sandbox.command(
            [sys.executable, str(task / "bomb.py"), str(cap), token], task, env, fd=fd, hidden=(), shown_files=()
        )
        proc = subprocess.Popen(command, pass_fds=(fd,), env=env, stdout=subprocess.DEVNULL, start_new_session=True)
    finally:
        os.close(fd)
    watch, counted = process_cap.NamespaceWatch(proc.pid, cap), 0
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None and not watch.over_cap():
        time.sleep(0.05)
    counted = watch.count()
    os.killpg(proc.pid, 9)
    proc.wait()
    assert counted > cap, "the watch saw the bomb's processes"
    time.sleep(0.5)
    assert not _left(token), "ending bwrap ended every process of its namespace"


def test_a_graded_check_under_the_outside_count_passes_an_honest_kernel(monkeypatch):
    """The count runs on every graded check where no kernel limit holds: it must not stop a
    correct one (the child's own threads, the compile helper, the simulator's threads)."""
    from grader.checking import isolate
    from grader.checking.pipeline import check_file
    from grader.exercises import exercise

    monkeypatch.setenv("ZEROGPU_SECRET", "test-secret")
    monkeypatch.delenv("ZEROGPU_UNSANDBOXED", raising=False)
    monkeypatch.setattr(process_cap, "enforced", lambda cgroup: False)
    watched = []
    spawn = isolate._spawn

    def spawn_and_note(*args, **kwargs):
        proc = spawn(*args, **kwargs)
        watched.append(proc.watch is not None)
        return proc

    monkeypatch.setattr(isolate, "_spawn", spawn_and_note)
    result = check_file("vector_add", exercise("vector_add").solution_file, graded=True)
    assert watched == [True] and result.passed, result.message


def test_a_cgroup_still_busy_is_removed_once_its_tasks_are_gone():
    """A cgroup whose last task is still dying is removed later, and before the grader exits."""
    cgroup = process_cap.new_cgroup(8)
    if cgroup is None:
        pytest.skip("no pids cgroup can be made here")
    sleeper = subprocess.Popen(process_cap.enter_then_exec(["sleep", "30"], cgroup))
    try:
        time.sleep(0.2)
        process_cap.remove_cgroup(cgroup, wait=0.0)  # busy: left pending
        assert cgroup.exists() and cgroup in process_cap._pending
    finally:
        sleeper.kill()
        sleeper.wait()
    process_cap._remove_pending()  # what the grader runs at exit
    assert not cgroup.exists() and not process_cap._pending

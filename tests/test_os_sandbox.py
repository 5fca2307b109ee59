"""The operating system's wall (grader/containment/sandbox.py), tested for real: a probe
script, not held back by the static policy or the guard, runs inside the very bwrap command a
graded child gets and reports what it could reach."""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from grader.children.spawn import contained
from grader.containment import process_cap, sandbox, view
from grader.containment.guard import scrubbed_env
from grader.paths import ROOT, data_dir

pytestmark = pytest.mark.skipif(sandbox.unavailable() is not None, reason=str(sandbox.unavailable()))

PROBE = r"""
import ctypes, json, os, socket, sys
args = json.load(open(sys.argv[1]))
out = {}
pids = [p for p in os.listdir("/proc") if p.isdigit()]
out["pids"] = pids
def read_all(name):
    text = b""
    for p in pids:
        try:
            text += open(f"/proc/{p}/{name}", "rb").read() + b"\n"
        except OSError:
            pass
    return text.decode(errors="replace")
out["environs"], out["cmdlines"] = read_all("environ"), read_all("cmdline")
out["mountinfo"] = open("/proc/self/mountinfo").read()
out["env"] = dict(os.environ)
def tries(f):
    try:
        f()
        return "ok"
    except Exception as e:
        return type(e).__name__
out["solution"] = tries(lambda: open(args["solution"]).read())
def read_secret():
    out["secret_text"] = open(args["secret_file"]).read()
out["secret_file"] = tries(read_secret)
out["connect"] = tries(lambda: socket.create_connection(("127.0.0.1", args["port"]), timeout=2))
def unix(address):
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(2)
        s.connect(address)
out["unix"] = {address: tries(lambda: unix(address)) for address in args["unix"]}
out["write_root"] = tries(lambda: open(args["escape"], "w").write("x"))
out["write_tmp_host"] = tries(lambda: open("/var/tmp/zerogpu-escape", "w").write("x"))
open(os.path.join(args["task"], "inside"), "w").write("x")
libc = ctypes.CDLL(None, use_errno=True)
out["ptrace"] = (libc.ptrace(0, 0, 0, 0), ctypes.get_errno())
out["unshare"] = (libc.unshare(0x20000), ctypes.get_errno())
# a daemon in a new session that would outlive the check
if os.fork() == 0:
    os.setsid()
    os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", args["token"]])
print(json.dumps(out))
"""
LOOK_AROUND = r"""
import json, os, stat, sys
seen, sockets = [], []
for place, folders, files in os.walk("/"):
    if place in ("/proc", "/sys", "/dev"):
        folders[:] = []
        continue
    for name in folders + files:
        path = os.path.join(place, name)
        seen.append(path)
        try:
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                sockets.append(path)
        except OSError:
            pass
def importable(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False
print(json.dumps({
    "seen": seen,
    "sockets": sockets,
    "importable": {n: importable(n) for n in ("numpy", "numba", "llvmlite", "grader.children.__main__", "pytest", "IPython", "dask")},
    "cwd": os.getcwd(),
}))
"""


def _contained(tmp_path, script: str, args: list, *, contain: dict, env=None, timeout=60, task_writable=True):
    """Run `script` inside the graded child's bwrap command, as grader/children/spawn.py starts
    it: bwrap's own environment is the child's. The task folder is tmp_path/"task"."""
    task = tmp_path / "task"
    (task / "work").mkdir(parents=True, exist_ok=True)
    (task / "script.py").write_text(script)
    env = env or scrubbed_env(task / "work", ROOT, "simulator")
    fd = sandbox.seccomp_fd()
    try:
        command = sandbox.command(
            [sys.executable, str(task / "script.py"), *args], task, env, fd=fd, task_writable=task_writable, **contain
        )
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, pass_fds=(fd,), env=env)
    finally:
        os.close(fd)


@pytest.fixture
def secret_file(tmp_path_factory):
    """A grading secret in a folder of its own, hidden as `zerogpu grade` hides its files."""
    path = tmp_path_factory.mktemp("secret") / "grading-secret"
    path.write_text("s3cr3t-file\n")
    return path


@pytest.fixture
def host_sockets():
    """Unix sockets listening on the host: in a folder under /tmp, under /run where it can be
    written, and in the abstract namespace."""
    folders, listeners = [Path(tempfile.mkdtemp(prefix="zerogpu-sock-"))], []
    try:
        folders.append(Path(tempfile.mkdtemp(prefix="zerogpu-sock-", dir="/run")))
    except OSError:
        pass  # not writable by this user: the /tmp one stands for it
    addresses = [str(folder / "daemon.sock") for folder in folders] + [f"\0zerogpu-test-{os.getpid()}"]
    for address in addresses:
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(address)
        listener.listen(1)
        listeners.append(listener)
    yield addresses
    for listener in listeners:
        listener.close()
    for folder in folders:
        shutil.rmtree(folder)


def _run(tmp_path, secret_file, unix=()):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    token = f"zerogpu-leftover-{os.getpid()}-{tmp_path.name}"
    task = tmp_path / "task"
    task.mkdir()
    args = {
        "solution": str(ROOT / "solutions" / "vector_add.py"),
        "secret_file": str(secret_file),
        "port": listener.getsockname()[1],
        "unix": list(unix),
        "escape": str(ROOT / "escape"),
        "task": sandbox.TASK,  # the task folder, inside
        "token": token,
    }
    (task / "args.json").write_text(json.dumps(args))
    try:  # the probe plays the submission
        done = _contained(
            tmp_path, PROBE, [str(task / "args.json")], contain=contained("vector_add", private=[str(secret_file)])
        )
    finally:
        listener.close()
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), token, task


def test_the_child_is_walled_in(tmp_path, monkeypatch, secret_file):
    monkeypatch.setenv("ZEROGPU_SECRET", "s3cr3t-env")  # in this process's environment, as a grader's
    out, token, task = _run(tmp_path, secret_file)
    assert len(out["pids"]) <= 2, out["pids"]  # the probe, its daemon: no process of the host, no bwrap
    assert "s3cr3t" not in out["environs"] and "s3cr3t" not in json.dumps(out["env"])
    assert out["solution"] == "FileNotFoundError"
    assert out["secret_file"] == "FileNotFoundError"
    assert out["connect"] in ("ConnectionRefusedError", "OSError", "TimeoutError"), out["connect"]
    assert out["write_root"] == "FileNotFoundError" and not (ROOT / "escape").exists()
    assert out["write_tmp_host"] == "FileNotFoundError"
    assert not Path("/var/tmp/zerogpu-escape").exists()
    assert (task / "inside").exists()  # the task folder is the one host folder it writes
    assert out["ptrace"] == [-1, 1] and out["unshare"] == [-1, 1]  # seccomp: EPERM


def test_nothing_inside_names_the_project_the_data_dir_or_the_secret(tmp_path, secret_file):
    """The mount table, every command line and environment inside (bwrap's would name every
    host path of the view: it is not there) and the child's own environment."""
    out, _, _ = _run(tmp_path, secret_file)
    for text in (out["mountinfo"], out["cmdlines"], out["environs"], json.dumps(out["env"])):
        for host_path in (ROOT, data_dir(), secret_file):
            assert str(host_path) not in text, (host_path, text)
    assert out["env"]["HOME"] == sandbox.WORK and out["env"]["PYTHONPATH"] == view.INSIDE


def test_host_sockets_cannot_be_reached(tmp_path, secret_file, host_sockets):
    """Filesystem sockets are not in the view; abstract ones belong to the host's network
    namespace, which the sandbox does not share."""
    out, _, _ = _run(tmp_path, secret_file, unix=host_sockets)
    assert set(out["unix"]) == set(host_sockets)
    for address, outcome in out["unix"].items():
        assert outcome in ("FileNotFoundError", "ConnectionRefusedError"), (address, outcome)


def test_the_view_is_an_allow_list(tmp_path):
    """What the child can see: the interpreter, the packages a check needs (not the rest of the
    grader's environment), the grader, the exercise's spec; no repository, no solutions, no
    other exercise's spec, no data dir, no socket anywhere."""
    done = _contained(tmp_path, LOOK_AROUND, [], contain=contained("vector_add"), timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    seen = out["seen"]
    assert f"{view.INSIDE}/kernels/vector_add.py" in seen and f"{view.INSIDE}/grader/children/__main__.py" in seen
    assert not [p for p in seen if p.startswith(f"{view.INSIDE}/kernels/") and not p.endswith("/vector_add.py")]
    assert {p for p in seen if p.count("/") == 2 and p.startswith(view.INSIDE)} == {
        f"{view.INSIDE}/{name}" for name in ("grader", "kernels", "venv", "task")
    }  # no tests/, solutions/, exercises/ of the project
    assert not [p for p in seen if ".git" in p.split("/") or p.endswith("/solutions/vector_add.py")]
    assert not [p for p in seen if str(data_dir()) in p or str(ROOT) in p]
    assert out["sockets"] == []
    assert out["importable"] == {
        "numpy": True,
        "numba": True,
        "llvmlite": True,
        "grader.children.__main__": True,
        "pytest": False,
        "IPython": False,
        "dask": False,
    }
    assert out["cwd"] == sandbox.WORK


ENVIRONMENT = r"""
import json, os, sys
libs = os.environ.get("CUDA_HOME", "")
print(json.dumps({
    "env": dict(os.environ),
    "libs": sorted(os.listdir(libs)) if libs else None,
    "course": sorted(os.listdir(os.path.join(libs, "course"))) if libs else None,
}))
"""


def test_the_environment_names_only_places_the_view_shows(tmp_path):
    """A variable naming a host place (a GPU host's CUDA_HOME, LD_LIBRARY_PATH) shows it at its
    own path, read-only, with a private folder inside it still hidden; a part naming the
    project, the data dir or home is dropped, and a variable left with nothing goes."""
    libs = tmp_path / "cuda"
    (libs / "course").mkdir(parents=True)
    (libs / "libfake.so").write_text("")
    (libs / "course" / "gradebook.sqlite").write_text("private")
    env = scrubbed_env(tmp_path / "task" / "work", ROOT, "simulator")
    env["CUDA_HOME"] = str(libs)
    env["LD_LIBRARY_PATH"] = os.pathsep.join([str(ROOT / ".venv" / "lib"), str(libs), str(Path.home() / "lib")])
    env["NUMBA_CACHE_DIR"] = str(data_dir() / "numba")
    contain = contained("vector_add", private=[str(libs / "course")])
    done = _contained(tmp_path, ENVIRONMENT, [], contain=contain, env=env)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["env"]["CUDA_HOME"] == str(libs) and out["env"]["LD_LIBRARY_PATH"] == str(libs)
    assert "NUMBA_CACHE_DIR" not in out["env"]
    assert out["libs"] == ["course", "libfake.so"] and out["course"] == []


def test_a_gpu_hosts_driver_folders_come_from_the_loaders_cache(monkeypatch):
    """libcuda and libnvidia-* outside the system's library folders (a container's
    /usr/local/nvidia/lib64) are shown; those inside them already are."""
    listing = """4 libs found in cache `/etc/ld.so.cache'
\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1
\tlibcuda.so.1 (libc6,x86-64) => /usr/local/nvidia/lib64/libcuda.so.1
\tlibnvidia-ptxjitcompiler.so.1 (libc6,x86-64) => /opt/driver/lib/libnvidia-ptxjitcompiler.so.1
\tlibz.so.1 (libc6,x86-64) => /opt/other/libz.so.1
"""
    monkeypatch.setattr(
        sandbox.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, stdout=listing, stderr="")
    )
    sandbox._driver_folders.cache_clear()
    try:
        assert sandbox._driver_folders() == ("/opt/driver/lib", "/usr/local/nvidia/lib64")
    finally:
        sandbox._driver_folders.cache_clear()


SCRATCH = r"""
import errno, json, os
MIB = 1 << 20
def fill(path, mib):
    written = 0
    try:
        with open(path, "wb") as f:
            for _ in range(mib):
                f.write(b"x" * MIB)
                f.flush()
                written += 1
    except OSError as e:
        return written, errno.errorcode[e.errno]
    return written, "ok"
out = {place: fill(place, 300) for place in ("big", "/tmp/big", "/dev/shm/big")}
for place in ("big", "/tmp/big", "/dev/shm/big"):
    os.remove(place)
out["second"] = fill("/tmp/again", 300)
for place in ("/new-file", "/dev/new-file", "/zerogpu/grader/new-file", "/zerogpu/venv/new-file"):
    out[place] = fill(place, 1)
print(json.dumps(out))
"""


def test_what_a_submission_writes_inside_has_a_total_cap(tmp_path):
    """The working folder and /tmp are one tmpfs of SCRATCH_BYTES, /dev/shm one of SHM_BYTES;
    everything else (the root, /dev, the view) is read-only. Nothing reaches the host's disk."""
    done = _contained(tmp_path, SCRATCH, [], contain=contained("vector_add"))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    scratch_mib, shm_mib = sandbox.SCRATCH_BYTES >> 20, sandbox.SHM_BYTES >> 20
    assert out["big"] == [scratch_mib, "ENOSPC"], out  # the working folder is in /tmp...
    assert out["/tmp/big"][0] <= 1 and out["/tmp/big"][1] == "ENOSPC"  # ...so the two share one cap
    assert out["/dev/shm/big"] == [shm_mib, "ENOSPC"]
    assert out["second"] == [scratch_mib, "ENOSPC"]  # removing frees it again
    for place in ("/new-file", "/dev/new-file", "/zerogpu/grader/new-file", "/zerogpu/venv/new-file"):
        assert out[place] == [0, "EROFS"], (place, out[place])
    assert [p.name for p in (tmp_path / "task" / "work").iterdir()] == []


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


def test_no_process_outlives_the_sandbox(tmp_path, secret_file):
    _, token, _ = _run(tmp_path, secret_file)
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
    from grader.checking.check import check_file
    from grader.children import recording, run, spares
    from grader.children.spawn import spawn
    from grader.exercises import exercise

    monkeypatch.setenv("ZEROGPU_SECRET", "test-secret")
    monkeypatch.delenv("ZEROGPU_UNSANDBOXED", raising=False)
    monkeypatch.setattr(process_cap, "enforced", lambda cgroup: False)
    watched = []

    def spawn_and_note(*args, **kwargs):
        proc = spawn(*args, **kwargs)
        watched.append(proc.watch is not None)
        return proc

    for module in (recording, run, spares):  # every child a check starts
        monkeypatch.setattr(module, "spawn", spawn_and_note)
    result = check_file("vector_add", exercise("vector_add").solution_file, graded=True)
    assert watched and all(watched) and result.passed, (watched, result.message)  # recording and checking child


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


def test_a_view_that_cannot_be_made_gives_one_line(tmp_path, monkeypatch):
    def refuse():
        raise PermissionError(13, "Permission denied", "/tmp/zerogpu-view-1")

    monkeypatch.setattr(view, "_stages", {})
    monkeypatch.setattr(view, "_new_folder", refuse)
    with pytest.raises(sandbox.SandboxUnavailable) as refused:
        sandbox.command([sys.executable, "-c", "pass"], tmp_path, {}, fd=0)
    message = str(refused.value)
    assert "/tmp/zerogpu-view-1" in message and "TMPDIR" in message and "\n" not in message


def test_a_stage_left_by_a_killed_grader_is_removed_by_the_next(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    left = tmp_path / f"{view.STAGE_PREFIX}{gone.pid}-abc"
    live = tmp_path / f"{view.STAGE_PREFIX}{os.getpid()}-def"
    for folder in (left, live):
        (folder / "site-packages" / "numba").mkdir(parents=True)
    view._remove_leftovers(str(tmp_path))
    assert not left.exists() and live.exists()


def test_a_spec_staged_by_another_check_meanwhile_is_used(monkeypatch):
    """Threads of a class grading show the same spec at once: when another one links it between
    this one's look and its link, this one uses that link."""
    stage = view.stage()
    spec = str(ROOT / "kernels" / "saxpy.py")
    found = os.stat(spec)
    staged = stage.folder / "files" / f"{found.st_ino}-{found.st_mtime_ns}"
    if staged.exists():
        shutil.rmtree(staged)
    link = os.link

    def another_check_first(source, target, **kwargs):
        link(source, target, **kwargs)  # the other thread's
        link(source, target, **kwargs)  # this one's: FileExistsError

    monkeypatch.setattr(view.os, "link", another_check_first)
    host, inside = stage.shown(spec)
    assert inside == f"{view.INSIDE}/kernels/saxpy.py" and Path(host).read_text() == Path(spec).read_text()


def test_a_variable_naming_a_link_names_the_place_it_leads_to(tmp_path):
    """CUDA_HOME=/usr/local/cuda is a link to /usr/local/cuda-13.0 on GPU hosts: inside, the
    variable names the place itself, which the view shows (the link is not in the view)."""
    real = tmp_path / "cuda-13.0"
    (real / "nvvm").mkdir(parents=True)
    link = tmp_path / "cuda"
    link.symlink_to(real)
    env = scrubbed_env(tmp_path / "task" / "work", ROOT, "simulator")
    env["CUDA_HOME"] = str(link)
    done = _contained(
        tmp_path,
        ENVIRONMENT.replace("os.listdir(os.path.join(libs, \"course\"))", "[]"),
        [],
        contain=contained("vector_add"),
        env=env,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["env"]["CUDA_HOME"] == str(real) and out["libs"] == ["nvvm"]


WRITE_THE_TASK_FOLDER = r"""
import os, sys
try:
    os.close(os.open(os.path.join(os.path.dirname(sys.argv[0]), "planted"), os.O_CREAT | os.O_WRONLY))
    print("wrote")
except OSError as err:
    print(err.errno)
"""


def test_a_recording_childs_task_folder_is_read_only(tmp_path):
    """A recording child answers through its pipe: its task folder is bound read-only, so what
    it writes can only land in the sandbox's capped tmpfs."""
    import errno

    done = _contained(tmp_path, WRITE_THE_TASK_FOLDER, [], contain=contained("vector_add"), task_writable=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(errno.EROFS) and not (tmp_path / "task" / "planted").exists()
    writable = _contained(tmp_path, WRITE_THE_TASK_FOLDER, [], contain=contained("vector_add"))
    assert writable.stdout.strip() == "wrote"

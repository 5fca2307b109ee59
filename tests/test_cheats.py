"""Graded mode against hostile and broken submissions: every one in tests/cheats/ must get
its expected verdict, never `passed`, and never crash the grader."""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.children.capture import CappedOutput
from grader.children.spawn import contained
from grader.checking.check import check_file
from grader.containment import sandbox
from grader.containment.guard import scrubbed_env
from grader.paths import ROOT
from grader.settings import CLASS_CASE_TIMEOUT

CHEATS = Path(__file__).parent / "cheats"


def corpus():
    for path in sorted(CHEATS.glob("*.py")):
        head = path.read_text().splitlines()[:2]
        exercise = re.fullmatch(r"# exercise: (\w+)", head[0]).group(1)
        expected = re.fullmatch(r"# expect: (\w+)", head[1]).group(1)
        # A timeout spends its time limit in full; a forged recording (record_*, the heaviest: two
        # children, a message read to its caps) runs in the slow tier, which CI runs.
        slow = (pytest.mark.slow,) if expected == "timeout" or path.stem.startswith("record_") else ()
        yield pytest.param(exercise, path, expected, id=path.stem, marks=slow)


def case_timeout(path: Path) -> float:
    """A cheat that must end as `timeout` gets 5 s a case (it spends them in full); any other
    gets a class's limit (CLASS_CASE_TIMEOUT), or what its `# timeout:` line asks: host work at
    the benchmark's size (recorded on every engine) takes seconds on a busy machine, and a
    verdict that is not `timeout` must not depend on how busy the machine is. Those cheats end
    at their verdict, long before the limit."""
    text = path.read_text()
    found = re.search(r"^# timeout: (\d+)$", text, re.M)
    if found:
        return float(found.group(1))
    return 5.0 if re.search(r"^# expect: timeout$", text, re.M) else float(CLASS_CASE_TIMEOUT)


def test_the_corpus_is_large():
    assert len(list(CHEATS.glob("*.py"))) >= 25


def engine_dependent():
    """The cheats whose verdict an engine gives (the rest are refused before any engine runs)."""
    return [p for p in corpus() if p.values[2] != "forbidden"]


@pytest.mark.thorough
@pytest.mark.parametrize("exercise_id, path, expected", engine_dependent())
def test_a_cheat_gets_the_same_verdict_on_the_simulator(exercise_id, path, expected, monkeypatch):
    """One verdict on every engine: with the kernel doctor off, Numba's simulator runs every
    case (the fallback for what the doctor declines), and each cheat gets the doctor's verdict."""
    monkeypatch.setenv("ZEROGPU_SECRET", "test-secret")
    monkeypatch.setenv("ZEROGPU_DOCTOR", "0")
    result = check_file(exercise_id, path, graded=True, case_timeout=case_timeout(path))
    assert result.verdict == expected, result.message
    assert result.engine == "simulator", "the simulator ran the cases"


@pytest.mark.parametrize("exercise_id, path, expected", list(corpus()))
def test_cheat_gets_its_verdict(exercise_id, path, expected, monkeypatch, tmp_path):
    monkeypatch.setenv("ZEROGPU_SECRET", "test-secret")
    result = check_file(exercise_id, path, graded=True, case_timeout=case_timeout(path))
    assert result.verdict == expected, result.message
    assert not result.passed and result.score < result.max_score
    assert result.seed is None, "graded results must not reveal the seed"
    assert "test-secret" not in result.to_json()
    assert result.unsandboxed == sandbox.forced_off(), "sandboxed wherever bubblewrap runs, marked where not"


ESCAPED = "zerogpu-escaped"
RUN_CHEAT = r"""
import os, runpy, subprocess, sys
os.environ.pop("ZEROGPU_SECRET")  # as the grader does: read, then gone from os.environ
fd = int(sys.argv[1])
sys.exit(subprocess.run(sys.argv[2:], env=dict(os.environ), pass_fds=(fd,)).returncode)
"""
INSIDE = r"""
import runpy, sys
from pathlib import Path
from grader.containment.guard import Guard, apply_limits
apply_limits(20, 16 << 30)  # as the graded child: limits first, the guard before the file loads
import numpy as np
from numba import cuda
Guard([], Path(sys.argv[2])).install()
module = runpy.run_path(sys.argv[1])
a, b, c = (cuda.to_device(np.ones(64, np.float32)) for _ in range(3))
module["launch"](a, b, c)
"""


def _marked(token: str) -> list:
    """Processes whose environment holds `token` (a child inherits it, daemon or not)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if token.encode() in Path(f"/proc/{pid}/environ").read_bytes():
                found.append(pid)
        except OSError:
            pass
    return found


@pytest.mark.thorough
@pytest.mark.skipif(sandbox.unavailable() is not None, reason=str(sandbox.unavailable()))
@pytest.mark.parametrize("exercise_id, path, expected", list(corpus()))
def test_cheat_is_contained_without_the_policy(exercise_id, path, expected, tmp_path):
    """The policy bypassed: the cheat's file runs in the graded child's bwrap command with the
    child's limits and an audit hook that denies no folder (the sandbox must hide them), started
    by a process whose start environment holds the secret."""
    task = tmp_path / "task"
    (task / "work").mkdir(parents=True)
    (task / "inside.py").write_text(INSIDE)
    env = scrubbed_env(task / "work", ROOT, "simulator")
    env["ZEROGPU_CHEAT_MARK"] = token = f"cheat-{os.getpid()}-{path.stem}"
    fd = sandbox.seccomp_fd()
    try:
        inner = sandbox.command(
            [sys.executable, str(task / "inside.py"), str(path), str(task)],
            task,
            env,
            fd=fd,
            **contained(exercise_id, also_shown=[path]),
        )
        proc = subprocess.Popen(
            [sys.executable, "-c", RUN_CHEAT, str(fd), *inner],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=(fd,),
            start_new_session=True,
            env={**env, "ZEROGPU_SECRET": "test-secret"},
        )
    finally:
        os.close(fd)
    output = CappedOutput(proc.stdout)
    try:
        proc.wait(timeout=10 if expected == "timeout" else 30)  # a cheat that never ends is cut short
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait()
    output.wait(5)
    assert "bwrap:" not in output.text()[:2000], output.text()[:2000]  # the cheat did run inside
    assert "test-secret" not in output.text()
    assert output.total < (2 << 30)
    for place in (ROOT, Path.cwd(), Path("/tmp"), Path("/var/tmp"), Path.home()):
        assert not (place / ESCAPED).exists(), place
    time.sleep(0.2)
    assert not _marked(token), "a process of the sandbox outlived it"


def test_grader_still_usable_after_the_corpus(monkeypatch):
    monkeypatch.setenv("ZEROGPU_SECRET", "test-secret")
    result = check_file("vector_add", ROOT / "solutions" / "vector_add.py", graded=True, case_timeout=30)
    assert result.passed, result.message
    assert "test-secret" not in result.to_json()

"""The `zerogpu` command: exit codes, JSON, and submissions that hang or crash."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from grader.settings import STARTUP_SECONDS
from grader.checking.check import check_file
from grader.cli import main
from grader.exercises import LADDER, ROOT


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "grader.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=300
    )


def test_solution_passes_with_exit_0():
    proc = run_cli("check", "vector_add", "solutions/vector_add.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASSED" in proc.stdout and "simulator" in proc.stdout


def test_starter_fails_with_exit_1_and_a_message():
    proc = run_cli("check", "vector_add", "exercises/vector_add.py")
    assert proc.returncode == 1
    assert "NOT YET" in proc.stdout and "Hint" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_json_has_the_documented_fields(capsys):
    code = main(["check", "vector_add", str(ROOT / "solutions/vector_add.py"), "--json", "--seed", "4"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["exercise"] == "vector_add" and data["backend"] == "simulator"
    assert data["engine"] == "doctor" and data["doctor"]["executor"] == "kernel doctor"
    assert data["passed"] is True and data["verdict"] == "passed" and data["seed"] == 4
    assert (
        len(data["cases"]) == 7
        and data["cases"][-1]["name"].endswith("fresh inputs")
        and data["cases"][0]["verdict"] == "passed"
    )
    assert data["speed"]["measured"] is False and "no GPU" in data["speed"]["reason"]


def test_same_seed_gives_the_same_inputs(capsys):
    """--seed makes a failure reproducible."""
    path = str(ROOT / "tests/submissions/vector_add/off_by_one.py")
    outputs = []
    for _ in range(2):
        main(["check", "vector_add", path, "--json", "--seed", "99"])
        outputs.append(json.loads(capsys.readouterr().out)["cases"][2]["mismatches"])
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize(
    "args",
    [
        ["check", "no_such_exercise", "solutions/vector_add.py"],
        ["check", "vector_add", "does/not/exist.py"],
    ],
)
def test_usage_errors_exit_2_with_a_message(args):
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert "error:" in proc.stderr and "Traceback" not in proc.stderr


def write(tmp_path, body):
    path = tmp_path / "submission.py"
    path.write_text(textwrap.dedent(body))
    return str(path)


SPIN = """
    from numba import cuda

    @cuda.jit
    def spin(c):
        i = 0
        while i >= 0:
            i = (i + 1) % 7

    def launch(a, b, c):
        spin[1, 1](c)
    """


def test_kernel_that_never_ends_is_stopped_as_timeout(tmp_path, capsys):
    path = write(tmp_path, SPIN)
    code = main(["check", "vector_add", path, "--json", "--timeout", "3"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["verdict"] == "timeout"
    assert "stopped" in data["message"]


FORGETS_STRIDE = ROOT / "tests" / "submissions" / "saxpy" / "forgets_stride.py"


@pytest.mark.parametrize("mode", [[], ["--graded"]], ids=["normal", "graded"])
def test_endless_loop_names_the_line_and_thread_it_was_stuck_on(mode, capsys):
    """A grid-stride `while` loop without its step: the time limit ends the case, and the
    message says where the GPU thread was, with the time limit, and the hint names the loop
    (graded: the child runs in bubblewrap and answers through its task folder all the same)."""
    code = main(["check", "saxpy", str(FORGETS_STRIDE), "--json", "--timeout", "2", *mode])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["verdict"] == "timeout", data["message"]
    case = data["cases"][0]
    lines = FORGETS_STRIDE.read_text().splitlines()
    loop = next(n for n, text in enumerate(lines, 1) if "while i < out.size" in text)
    assert case["line"] in (loop, loop + 1), case  # the loop's test or its body
    assert case["source"] == lines[case["line"] - 1].strip()
    message = data["message"]
    assert f"Your kernel `saxpy_kernel` was still running at line {case['line']} (`{case['source']}`" in message
    assert "thread 0 of block 0" in message and "time limit of 2 s ran out" in message, message
    assert "a loop that never ends?" in message and message.count(f"line {case['line']}") == 1
    assert f"`while` loop on line {loop}" in data["hint"] and "i += cuda.gridsize(1)" in data["hint"]
    assert all(c["verdict"] == "timeout" for c in data["cases"])


def test_endless_loop_at_import_names_its_line(capsys):
    path = ROOT / "tests" / "cheats" / "infinite_loop_at_import.py"
    started = time.monotonic()
    main(["check", "vector_add", str(path), "--json", "--timeout", "2"])
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"] == "timeout"
    # The learner's 2 s count from when the grader's imports are done, not after the whole
    # start-up allowance: the learner waits seconds, not half a minute.
    assert time.monotonic() - started < STARTUP_SECONDS, time.monotonic() - started
    assert "Your file was still being loaded at line 4 (`while True:`)" in data["message"], data["message"]
    assert "grid-stride" not in data["hint"] and "`break`" in data["hint"]


def test_the_time_limit_is_said_before_the_check_starts():
    proc = run_cli("check", "vector_add", "solutions/vector_add.py", "--timeout", "45")
    first = proc.stderr.splitlines()[0]
    assert first == "Checking vector_add: 7 cases, each may take up to 45 s (--timeout to change).", proc.stderr
    assert "Traceback" not in proc.stderr


def _children_running_grader():
    """Grader children of this process only (other test workers have their own)."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            if not proc.name.isdigit() or b"grader.children" not in (proc / "cmdline").read_bytes():
                continue
            parent = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if parent == os.getpid():
                pids.append(int(proc.name))
        except (OSError, ValueError, IndexError):
            pass
    return pids


def test_process_that_dies_is_crashed(tmp_path):
    """A child killed from outside (OOM killer, a GPU fault) ends as `crashed`, naming the signal."""
    path = write(tmp_path, SPIN)
    found = {}

    def run():
        found["result"] = check_file("vector_add", path, case_timeout=60)

    before = set(_children_running_grader())
    worker = threading.Thread(target=run)
    worker.start()
    deadline, first_seen = time.monotonic() + 60, None
    while worker.is_alive() and time.monotonic() < deadline:
        # every child the check starts, once it has had a second to start: the spare started
        # ahead, the recording child (unless it answered and went), the child running the cases
        new = set(_children_running_grader()) - before
        first_seen = first_seen or (time.monotonic() if new else None)
        if first_seen and time.monotonic() > first_seen + 1.0:
            for pid in new:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        time.sleep(0.1)
    worker.join(timeout=120)
    result = found["result"]
    assert result.verdict == "crashed", result.message
    assert "SIGKILL" in result.message


def test_a_forbidden_call_is_refused_before_running(tmp_path, capsys):
    path = write(
        tmp_path,
        """
        import os

        def launch(a, b, c):
            os._exit(3)
        """,
    )
    code = main(["check", "vector_add", path, "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["verdict"] == "forbidden"
    assert "line 2" in data["message"] and data["cases"] == []


def test_list_shows_every_exercise():
    proc = run_cli("list")
    assert proc.returncode == 0
    for exercise_id in ("thread_ids", "matmul_tiled", "softmax_fused"):
        assert exercise_id in proc.stdout


@pytest.mark.parametrize("columns", [60, 80, 100])
def test_list_fits_a_small_terminal_with_its_header_in_view(monkeypatch, capsys, columns):
    """A lab terminal of 80 columns and 24 rows: one line per rung, none wider than the
    terminal, so the header is still on screen after the last rung (a wrapped table scrolled
    it away)."""
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) <= 24 - 2 and max(len(line) for line in lines) <= columns, "\n".join(lines)
    assert lines[0].strip() == "Zero to GPU — the ladder" and "stage" in lines[2] and "status" in lines[2]
    for exercise_id in LADDER:
        assert any(f" {exercise_id} " in line for line in lines), exercise_id


def test_list_in_a_wide_terminal_says_what_each_lesson_teaches(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "lesson" in out.splitlines()[2] and "blockIdx.x" in out and "What each lesson teaches" not in out


def test_device_prints_each_ceiling_with_its_method_and_both_copy_figures(monkeypatch, capsys):
    """On a GPU `zerogpu device` shows how every ceiling was measured, and the two copy
    figures behind the copy ceiling (the faster one is the ceiling) with their range over
    the processes that measured them."""
    import grader.backend
    import grader.gpu.ceilings

    measured = {
        "name": "Some GPU",
        "driver": "1.0",
        "sms": 132,
        "compute_capability": [9, 0],
        "measured_at": "2026-11-29 12:00:00",
        "copy_bandwidth": 4.2e12,
        "copy_parts": {"cudaMemcpy": 3.9e12, "copy kernel": 4.2e12},
        "copy_runs": {"cudaMemcpy": [3.7e12, 3.9e12], "copy kernel": [4.2e12, 4.1e12]},
        "read_bandwidth": 4.4e12,
        "fp32_flops": 53e12,
        "method": grader.gpu.ceilings.METHOD,
    }
    monkeypatch.setattr(grader.backend, "current", lambda: "gpu")
    monkeypatch.setattr(grader.gpu.ceilings, "cached_ceilings", lambda: None)  # measured now
    monkeypatch.setattr(grader.gpu.ceilings, "ceilings", lambda refresh=False: measured)
    assert main(["device"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # as read, whatever the terminal's width
    assert "4200.0 GB/s" in out
    assert "cudaMemcpy 3900.0 GB/s (processes: 3700-3900), copy kernel 4200.0 GB/s (processes: 4100-4200)" in out
    assert "53.0 TFLOP/s" in out and "hold" in out


def test_json_engine_is_the_simulator_for_what_the_doctor_cannot_run(tmp_path, capsys):
    """An array's bytes read as another dtype (`.view`) are beyond the doctor: Numba's simulator runs it."""
    path = tmp_path / "viewed.py"
    path.write_text(
        "import numpy as np\n"
        + (ROOT / "solutions/vector_add.py")
        .read_text()
        .replace("        c[i] = a[i] + b[i]", "        c.view(np.float32)[i] = a[i] + b[i]")
    )
    assert "c.view(np.float32)" in path.read_text()
    main(["check", "vector_add", str(path), "--json", "--seed", "4"])
    data = json.loads(capsys.readouterr().out)
    assert data["passed"] and data["doctor"]["executor"] == "simulator"
    assert data["backend"] == "simulator" and data["engine"] == "simulator"


def test_progress_reset_asks_then_forgets(monkeypatch, tmp_path, capsys):
    """Does `zerogpu progress --reset` refuse without confirmation when it cannot ask, delete the
    progress file with --yes, and does --help say where progress is kept?"""
    monkeypatch.setenv("ZEROGPU_HOME", str(tmp_path))
    main(["check", "vector_add", str(ROOT / "solutions/vector_add.py"), "--seed", "4"])
    capsys.readouterr()
    stored = tmp_path / "progress.sqlite"
    assert stored.exists()
    monkeypatch.setattr(sys, "stdin", open(os.devnull))
    assert main(["progress", "--reset"]) == 2
    assert "--yes" in capsys.readouterr().err and stored.exists()
    assert main(["progress", "--reset", "--yes"]) == 0
    assert not stored.exists() and "deleted" in capsys.readouterr().out
    main(["progress", "--json"])
    assert all(
        entry is None or entry.get("status") != "passed"
        for entry in json.loads(capsys.readouterr().out)["exercises"].values()
    )
    helped = run_cli("progress", "--help").stdout
    assert "ZEROGPU_HOME" in helped and "~/.local/share/zerogpu" in helped and "per clone" in helped


USE_CASES = {
    # command module: the grader modules it may import (its use case, how results look, limits)
    "grade": {"grader.classroom.run", "grader.course.grade_course", "grader.classroom.kind", "grader.settings"},
    "doctor": {"grader.doctor.checkup", "grader.doctor.summary", "grader.settings"},
    "course": {"grader.course.build", "grader.course.config"},
    "check": {"grader.learner.attempt", "grader.render", "grader.settings"},
    "ladder": {"grader.learner.ladder", "grader.learner.progress", "grader.notebook.widgets"},
    "report": {"grader.report.write", "grader.course.feedback"},
    "device": {"grader.gpu.ceilings"},
    "lab": {"grader.learner.lab"},
    # the package's own: one-line errors for what any use case may refuse; a safe terminal
    "__init__": {"grader.exercises", "grader.paths"},
    "__main__": set(),
    "console": {"grader.textsafe"},
}
CLI_MODULES = sorted(p.stem for p in (ROOT / "grader" / "cli").glob("*.py"))


@pytest.mark.parametrize("command", CLI_MODULES)
def test_a_command_calls_its_use_case_and_holds_no_grading_logic(command):
    """Does each module of grader/cli/ import only the use case it calls (and what it prints
    with), rather than the grading machinery below it (imports inside functions and
    `from package import module` included)?"""
    from test_layers import imported_names, resolve

    names = {resolve(n) for n in imported_names(ROOT / "grader" / "cli" / f"{command}.py")}
    assert {n for n in names if not n.startswith("grader.cli")} <= USE_CASES[command]


def test_the_use_case_rule_sees_a_command_that_reaches_below_its_use_case(tmp_path):
    """Would the rule notice a command importing the pipeline inside a function, or through
    its package (`from grader.checking import check`)?"""
    from test_layers import imported_names, resolve

    for line in ("from grader.checking.check import check_file", "from grader.checking import check"):
        sneaky = tmp_path / "sneaky.py"
        sneaky.write_text(f"def cmd(args):\n    {line}\n")
        assert {resolve(n) for n in imported_names(sneaky)} == {"grader.checking.check"}


def test_grade_refuses_a_missing_folder_with_one_line(tmp_path, capsys):
    """Does `zerogpu grade` on a folder that is not there say so in one line, exit 2, and write
    no gradebook?"""
    code = main(["grade", str(tmp_path / "nowhere"), "--unsandboxed", "--db", str(tmp_path / "b.sqlite")])
    err = capsys.readouterr().err
    assert code == 2 and err.strip().splitlines() == [f"error: no such folder: {tmp_path / 'nowhere'}"]
    assert not (tmp_path / "b.sqlite").exists()


@pytest.mark.parametrize("how", ["library", "command"])
def test_the_doctors_checkup_stops_an_endless_kernel_at_its_limit(how, capsys):
    """Does the doctor's checkup, called as a library function or through `zerogpu doctor`,
    end an endless kernel's case at the limit asked for, as `timeout`, and run no case after it?"""
    from grader.doctor.checkup import run_checkup

    endless = ROOT / "tests/submissions/saxpy/forgets_stride.py"
    started = time.monotonic()
    if how == "library":
        rows, _, seed = run_checkup("saxpy", endless, seed=1, timeout=1)
        assert seed == 1
    else:
        assert main(["doctor", "saxpy", str(endless), "--json", "--seed", "1", "--timeout", "1"]) == 1
        rows = json.loads(capsys.readouterr().out)["cases"]
    assert time.monotonic() - started < 30
    assert rows[-1]["verdict"] == "timeout" and "no result within 1 s" in rows[-1]["message"]
    assert all(r["verdict"] != "timeout" for r in rows[:-1])


@pytest.mark.parametrize(
    "command, says",
    [
        (["check", "vector_add", "{tmp}/nowhere.py"], "error: no such file: {tmp}/nowhere.py"),
        (["report"], "error: give a class (or course) folder, or --db PATH"),
        (
            ["report", "{tmp}"],
            "error: no gradebook at {tmp}/gradebook.sqlite. Grade the class first: zerogpu grade {tmp}",
        ),
        (
            ["report", "--db", "{tmp}/not-a-book.sqlite"],
            "error: cannot read the gradebook {tmp}/not-a-book.sqlite (file is not a database): give the right file",
        ),
    ],
    ids=["check-missing-file", "report-nothing-named", "report-no-gradebook", "report-not-a-gradebook"],
)
def test_a_use_case_that_refuses_is_one_line_and_exit_2(command, says, tmp_path, capsys):
    """Does a command whose use case refuses (a missing file, no gradebook, a file that is not
    one) print one line naming the fix, exit 2, and write nothing?"""
    (tmp_path / "not-a-book.sqlite").write_text("these are notes, not a gradebook\n" * 200)
    before = sorted(tmp_path.iterdir())
    code = main([part.format(tmp=tmp_path) for part in command])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and err.startswith(says.format(tmp=tmp_path)), err
    assert sorted(tmp_path.iterdir()) == before


@pytest.mark.parametrize("where", ["simulator", "failing GPU"])
def test_device_says_why_it_has_no_ceilings(where, monkeypatch, capsys):
    """On a CPU engine `zerogpu device` says there is nothing to measure; on a GPU whose
    measurement fails, one error line: exit 1 either way, no traceback."""
    import grader.backend
    import grader.gpu.ceilings

    if where == "failing GPU":

        def fails(refresh=False):
            raise RuntimeError("measuring the ceilings failed: no driver")

        monkeypatch.setattr(grader.backend, "current", lambda: "gpu")
        monkeypatch.setattr(grader.gpu.ceilings, "cached_ceilings", lambda: None)
        monkeypatch.setattr(grader.gpu.ceilings, "ceilings", fails)
    else:
        monkeypatch.setattr(grader.backend, "current", lambda: "simulator")
    assert main(["device"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    said = "error: measuring the ceilings failed: no driver" if where == "failing GPU" else "no ceilings to measure"
    assert said in out and "Traceback" not in out


def test_grade_prints_an_eta_per_line_and_one_summary_line():
    """Does a grading run's log line carry the time left, and does the run end with one line of
    verdict counts, time and how many things need a look?"""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from grader.cli.grade import Printer, duration

    buffer = io.StringIO()
    printer = Printer(Console(file=buffer, width=200))
    printer.starting("3 tasks", 3)
    for student, verdict in (("ann", "passed"), ("bob", "timeout"), ("cy", "passed")):
        result = SimpleNamespace(verdict=verdict)
        printer.done(SimpleNamespace(student=student, exercise="vector_add", note=""), result)
    printer.summary(SimpleNamespace(needs_look=2), "class")
    lines = buffer.getvalue().splitlines()
    assert lines[1].startswith("[1/3] ann/vector_add: passed · about ") and lines[1].endswith(" left")
    assert lines[3] == "[3/3] cy/vector_add: passed"
    assert lines[4].startswith("graded 3 in ") and lines[4].endswith(
        ": 2 passed, 1 timeout; 2 need a look (zerogpu report class)"
    )
    assert (duration(4.24), duration(392), duration(7300)) == ("4.2 s", "6 min 32 s", "2 h 1 min")

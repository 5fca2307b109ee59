"""The class report and a learner's progress: what an instructor forwards must match the
gradebook row for row, say plainly when speed was not graded, and open without a server;
a learner's record must survive restarts and point at the right next exercise."""

import base64
import csv
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections import Counter

import pytest

from grader.notebook import charts

from grader.learner import progress

from grader.notebook import widgets
from grader.cli import main
from grader.exercises import LADDER, ROOT
from grader.classroom.gradebook import NOT_SUBMITTED, Gradebook
from grader.report.data import NO_GPU, analyse
from grader.report.write import write_report
from grader.result import CaseResult, CheckResult, Speed, SpeedDetails

EXERCISES = ("thread_ids", "vector_add", "saxpy", "reduce_sum")
CLASS = {
    # student: verdict per exercise in EXERCISES order (None: not handed in)
    "ada": ("passed", "passed", "passed", "passed"),
    "bob": ("passed", "out_of_bounds", "wrong_result", None),
    "cy": ("out_of_bounds", None, None, None),
    "dee": (None, None, None, None),
    "eve": ("passed", "passed", "race", "race"),
    "fay": (None, None, None, None),
    "gus": ("passed", "passed", "out_of_bounds", "unwritten_output"),
    "hal": ("passed", "passed", "passed", "too_slow"),
}
STUCK_ON = {
    "ada": "",
    "bob": "vector_add",
    "cy": "thread_ids",
    "dee": "thread_ids",
    "eve": "saxpy",
    "fay": "thread_ids",
    "gus": "saxpy",
    "hal": "reduce_sum",
}


def gpu_speed(speedup: float, *, required=1.2, tier="great", points=2) -> Speed:
    """A speed section shaped like grader/gpu/speed.py's (the keys the report reads and more)."""
    meets = speedup >= required
    return Speed(
        measured=True,
        details=SpeedDetails.from_dict(
            {
                "device": "NVIDIA H200",
                "dims": {"n": 1 << 24},
                "bound": "memory",
                "yours_ms": 0.2 / speedup,
                "baseline_ms": 0.2,
                "target_ms": 0.1,
                "speedup_vs_baseline": {
                    "median": speedup,
                    "low": speedup * 0.98,
                    "high": speedup * 1.02,
                    "spread": 0.04,
                },
                "fraction_of_target": {"median": speedup / 2, "low": 0.4, "high": 0.5, "spread": 0.05},
                "throughput": {"unit": "GB/s", "achieved": 2500.0, "fraction_of_ceiling": 0.75},
                "ceilings": {"copy_bandwidth_GBps": 3300.0, "fp32_TFLOPs": 30.6},
                "floor_ms": 0.01,
                "below_floor": False,
                "hidden_work": False,
                "faster_than_target_warning": False,
                "required_speedup": required,
                "meets_requirement": meets,
                "tier": tier if meets else None,
                "points": points if meets else 0,
                "max_points": 3,
                "rounds": 5,
                "stop_reason": "settled",
                "method": "...",
                "summary": "...",
            }
        ),
    )


def result(exercise: str, verdict: str, backend="simulator", speed: Speed | None = None):
    cases = tuple(
        CaseResult(name, {"n": n}, "passed" if verdict in ("passed", "too_slow") or k == 0 else verdict, total=n)
        for k, (name, n) in enumerate((("tiny", 1), ("one block", 128), ("ragged", 1000)))
    )
    passed = sum(c.passed for c in cases)
    speed = speed or Speed(measured=False, reason="not measured: no GPU (Numba's CUDA simulator)")
    bonus = speed.details.points if speed.measured and verdict == "passed" else 0
    return CheckResult(
        exercise,
        exercise.replace("_", " "),
        backend,
        verdict,
        "message",
        "hint",
        cases,
        speed,
        round(10 * passed / 3, 2) + bonus,
        10.0 + (3 if speed.measured else 0),
        None,
        0.5,
    )


def fill(book: Gradebook, gpu_speedups: dict | None = None) -> None:
    """CLASS into the gradebook; with gpu_speedups {(student, exercise): speedup} those
    results carry GPU speed details, the rest were graded on the simulator."""
    for student, verdicts in CLASS.items():
        for exercise, verdict in zip(EXERCISES, verdicts):
            if verdict is None:
                book.record(student, exercise, None, None)
                continue
            speedup = (gpu_speedups or {}).get((student, exercise))
            if speedup is None:
                book.record(student, exercise, "sha", result(exercise, verdict))
            else:
                book.record(student, exercise, "sha", result(exercise, verdict, "gpu", gpu_speed(speedup)))


@pytest.fixture(scope="module")
def simulator_report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class")
    fill(Gradebook(folder / "gradebook.sqlite"))
    assert main(["report", str(folder), "--out", str(folder / "out")]) == 0
    return folder


GPU_SPEEDUPS = {
    ("ada", "vector_add"): 2.0,
    ("ada", "saxpy"): 1.5,
    ("gus", "vector_add"): 1.8,
    ("eve", "vector_add"): 2.6,
    ("hal", "reduce_sum"): 0.9,
    ("bob", "vector_add"): 3.0,
}  # bob's is out_of_bounds: its time must not count


@pytest.fixture(scope="module")
def gpu_report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gpu-class")
    fill(Gradebook(folder / "book.sqlite"), GPU_SPEEDUPS)
    written = write_report(folder / "book.sqlite", folder / "out", title="GPU class")
    return written


def read_csv(path):
    """Rows by their student or exercise id."""
    with open(path, newline="", encoding="utf-8") as f:
        return {row.get("exercise") or row["student"]: row for row in csv.DictReader(f)}


# ---- the class report ------------------------------------------------------------------


def test_pass_rates_and_verdict_counts_match_the_rows(simulator_report):
    rows = Gradebook(simulator_report / "gradebook.sqlite").rows()
    summary = {
        row["exercise"]: row
        for row in csv.DictReader(open(simulator_report / "out" / "exercises.csv", encoding="utf-8"))
    }
    assert list(summary) == list(EXERCISES), "ladder order"
    for exercise in EXERCISES:
        verdicts = Counter(r.verdict for r in rows if r.exercise == exercise)
        line = summary[exercise]
        for verdict in ("passed", "out_of_bounds", "race", "wrong_result", "too_slow", NOT_SUBMITTED):
            assert int(line[verdict]) == verdicts[verdict], (exercise, verdict)
        submitted = len(CLASS) - verdicts[NOT_SUBMITTED]
        assert int(line["submitted"]) == submitted
        assert float(line["pass_rate"]) == pytest.approx(verdicts["passed"] / submitted, abs=1e-3)
    assert summary["reduce_sum"]["pass_rate"] == "0.25"


def test_stuck_on_is_the_first_exercise_not_passed(simulator_report):
    students = read_csv(simulator_report / "out" / "students.csv")
    assert {name: row["stuck_on"] for name, row in students.items()} == STUCK_ON
    assert students["bob"]["stuck_on_verdict"] == "out_of_bounds"
    assert students["hal"]["stuck_on_verdict"] == "too_slow", "too slow is not passed"
    assert students["ada"]["percent"] == "100.0"


def test_students_who_submitted_nothing_are_listed(simulator_report):
    students = read_csv(simulator_report / "out" / "students.csv")
    assert [n for n, row in students.items() if row["submitted"] == "0"] == ["dee", "fay"]
    html = (simulator_report / "out" / "report.html").read_text()
    assert re.search(r"Attempted nothing \(2\):</b>.*?dee.*?fay", html, re.S)


def test_the_page_is_self_contained(simulator_report):
    html = (simulator_report / "out" / "report.html").read_text()
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(images) == 2, "verdicts and scores (no speed chart without a GPU)"
    assert all(base64.b64decode(i).startswith(b"\x89PNG\r\n\x1a\n") for i in images)
    text = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", html)
    assert not re.search(r"https?:|//[a-z]|<script|<link|@import|url\(", text, re.I)
    assert re.findall(r'\bsrc="([^"]*)', html) == ["data:image/png;base64," + i for i in images]


def test_without_gpu_results_speed_is_not_graded_and_shows_no_number(simulator_report):
    html = (simulator_report / "out" / "report.html").read_text()
    assert NO_GPU in html and "Speed was not graded" in html
    assert "×" not in html, "no speedup figure anywhere"
    for line in read_csv(simulator_report / "out" / "exercises.csv").values():
        assert line["gpu_timed"] == "0"
        assert line["median_speedup"] == line["required_speedup"] == line["tier_great"] == ""


def test_the_summary_names_class_size_median_and_hardest_exercise(simulator_report):
    html = (simulator_report / "out" / "report.html").read_text()
    report = analyse(Gradebook(simulator_report / "gradebook.sqlite").rows())
    assert len(report.students) == 8 and report.submissions == 20
    assert report.hardest.id == "reduce_sum"  # 1 of 4 pass
    cards = re.findall(r'<div class="k">(.*?)</div><div class="v[^"]*">(.*?)</div>', html)
    assert dict(cards)["Class size"] == "8" and dict(cards)["Hardest exercise"] == "reduce_sum"
    assert dict(cards)["Median score"] == f"{report.median_percent:.0f}%"


def test_gpu_speedups_are_summarised_against_the_required_speedup(gpu_report):
    lines = read_csv(gpu_report["exercises_csv"])
    # bob's timing came with a wrong answer; hal's counts although too slow
    assert lines["vector_add"]["gpu_timed"] == "3"
    assert float(lines["vector_add"]["median_speedup"]) == pytest.approx(2.0)
    assert lines["vector_add"]["meeting_required_speedup"] == "3"
    assert lines["vector_add"]["tier_great"] == "3"
    assert (lines["reduce_sum"]["gpu_timed"], lines["reduce_sum"]["meeting_required_speedup"]) == ("1", "0")
    assert lines["reduce_sum"]["tier_great"] == "0", "too slow reaches no tier"
    assert lines["thread_ids"]["median_speedup"] == "", "never timed: blank, not 0"
    html = gpu_report["html"].read_text()
    assert "Speed was not graded" not in html and "NVIDIA H200" in html
    assert html.count("data:image/png;base64,") == 3
    assert "<title>GPU class" in html


def test_missing_gradebook_is_a_usage_error(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert "zerogpu grade" in capsys.readouterr().err
    assert main(["report", "--db", str(tmp_path / "none.sqlite")]) == 2


def test_thousands_of_rows_take_seconds(tmp_path):
    book = Gradebook(tmp_path / "big.sqlite")
    verdicts = ("passed", "passed", "wrong_result", "out_of_bounds", "race", "too_slow", None)
    rows = []
    for s in range(400):
        for k, exercise in enumerate(LADDER):
            verdict = verdicts[(s * 7 + k * 3) % len(verdicts)]
            if verdict is None:
                rows.append((f"s{s:04}", exercise, None, NOT_SUBMITTED, 0, 0, None, None, 0))
                continue
            speed = gpu_speed(0.8 + (s % 17) / 5) if s % 2 else None
            r = result(exercise, verdict, "gpu" if speed else "simulator", speed)
            rows.append(
                (f"s{s:04}", exercise, "sha", verdict, r.score, r.max_score, r.backend, r.to_json(), time.time())
            )
    with sqlite3.connect(book.path) as db:
        db.executemany(
            "INSERT INTO results (student, exercise, submission_sha256, verdict, score, "
            "max_score, backend, result_json, graded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    started = time.perf_counter()
    written = write_report(book.path, tmp_path / "out")
    assert time.perf_counter() - started < 8
    assert len(read_csv(written["students_csv"])) == 400
    assert sum(int(r["submitted"]) for r in read_csv(written["exercises_csv"]).values()) == sum(
        r[3] != NOT_SUBMITTED for r in rows
    )


# ---- a learner's progress --------------------------------------------------------------

RECORD = """
import sys
from grader.learner import progress
from tests.test_report import result, gpu_speed
for exercise, verdict, tier in [("thread_ids", "passed", None), ("vector_add", "passed", "great"),
                                ("vector_add", "passed", "good"), ("vector_add", "wrong_result", None),
                                ("saxpy", "out_of_bounds", None)]:
    speed = gpu_speed(2.0, tier=tier, points={"good": 1, "great": 2}[tier]) if tier else None
    progress.record(result(exercise, verdict, "gpu" if tier else "simulator", speed))
"""


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("ZEROGPU_HOME", str(tmp_path))
    return tmp_path


def test_progress_survives_a_restart_and_the_best_tier_wins(home):
    env = {**os.environ, "ZEROGPU_HOME": str(home), "ZEROGPU_BACKEND": "simulator"}
    subprocess.run([sys.executable, "-c", RECORD], cwd=ROOT, env=env, check=True)
    out = subprocess.run(
        [sys.executable, "-m", "grader.cli", "progress", "--json"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    seen = json.loads(out)
    assert seen["exercises"]["vector_add"] == {
        "status": "passed",
        "tier": "great",
        "attempts": 3,
        "last_verdict": "wrong_result",
    }
    assert seen["exercises"]["thread_ids"]["tier"] is None
    assert seen["exercises"]["saxpy"]["status"] == "attempted"
    assert seen["next"]["exercise"] == "saxpy"
    assert seen["next"]["command"].startswith("zerogpu check saxpy ")
    assert seen["next"]["notebook"].endswith("03-saxpy-grid-stride-loops.ipynb")
    assert progress.status() == {"thread_ids": "passed", "vector_add": "passed", "saxpy": "attempted"}
    assert progress.best_tiers() == {"vector_add": "great"}


def test_a_tier_counts_only_when_the_attempt_passed(home):
    timed_but_wrong = result("saxpy", "wrong_result", "gpu", gpu_speed(2.0, tier="near the limit"))
    progress.record(timed_but_wrong)
    assert progress.best_tiers() == {}


def test_an_old_progress_file_is_migrated(home):
    with sqlite3.connect(home / "progress.sqlite") as db:
        db.execute(
            "CREATE TABLE attempts (exercise TEXT, at REAL, backend TEXT, verdict TEXT, score REAL, max_score REAL)"
        )
        db.execute("INSERT INTO attempts VALUES ('thread_ids', 1.0, 'simulator', 'passed', 10, 10)")
    assert progress.status() == {"thread_ids": "passed"}
    progress.record(result("vector_add", "passed", "gpu", gpu_speed(2.0, tier="good", points=1)))
    assert progress.ladder_status()["vector_add"]["tier"] == "good"
    with sqlite3.connect(home / "progress.sqlite") as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(attempts)")]
    assert columns[-2:] == ["tier", "tier_points"]


def test_the_ladder_picture_takes_the_recorded_status(home):
    progress.record(result("thread_ids", "passed", "gpu", gpu_speed(2.0, tier="good", points=1)))
    rungs = widgets.progress(progress.ladder_status()).model()
    assert (rungs[0].state, rungs[0].tier) == ("passed", "good")
    assert charts.next_rung(list(rungs)).id == progress.next_exercise() == "vector_add"


def test_next_step_when_nothing_is_started_and_when_all_pass(home, capsys):
    assert progress.next_step().exercise == LADDER[0]
    assert main(["progress"]) == 0
    printed = capsys.readouterr().out
    assert "Next: thread_ids" in printed and "01-first-kernel-thread-ids.ipynb" in printed
    assert progress.next_step({e: "passed" for e in LADDER}) is None


def test_an_untouched_starter_is_not_attempted_not_wrong(tmp_path):
    """Is a hand-in byte-identical to exercises/<id>.py counted as not attempted — apart from
    wrong answers in 'stuck on', the pass rate and the hardest exercise — and said so on the page?"""
    import hashlib

    from grader.report.data import NOT_ATTEMPTED

    starter = hashlib.sha256((ROOT / "exercises" / "saxpy.py").read_bytes()).hexdigest()
    book = Gradebook(tmp_path / "gradebook.sqlite")
    rows = []
    for student in ("ann", "ben", "col"):
        for exercise in ("vector_add", "saxpy"):
            untouched = exercise == "saxpy" and student != "col"
            verdict = "passed" if exercise == "vector_add" or student == "col" else "wrong_result"
            r = result(exercise, verdict)
            rows.append(
                (
                    student,
                    exercise,
                    starter if untouched else f"sha-{student}",
                    verdict,
                    r.score,
                    r.max_score,
                    r.backend,
                    r.to_json(),
                    time.time(),
                )
            )
    with sqlite3.connect(book.path) as db:
        db.executemany(
            "INSERT INTO results (student, exercise, submission_sha256, verdict, score, "
            "max_score, backend, result_json, graded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    report = analyse(book.rows())
    saxpy = next(e for e in report.exercises if e.id == "saxpy")
    assert saxpy.not_attempted == 2 and saxpy.submitted == 1 and saxpy.pass_rate == 1.0
    assert saxpy.verdicts.get("wrong_result", 0) == 0
    assert report.stuck == Counter() and report.not_attempted == Counter({"saxpy": 2})
    assert {s.name: s.verdicts["saxpy"] for s in report.students}["ann"] == NOT_ATTEMPTED
    page = (write_report(book.path, tmp_path / "out")["html"]).read_text()
    assert "Handed in the starter unchanged" in page and "not attempted (starter unchanged)" in page


def test_results_timed_on_different_gpus_say_which_gpu_timed_each(tmp_path):
    """Does a class timed on two GPU models (a cluster) name the GPU of every timed result,
    and a class timed on one name none per result?"""
    from dataclasses import replace

    book = Gradebook(tmp_path / "book.sqlite")
    fill(book, GPU_SPEEDUPS)
    a100 = gpu_speed(1.5)
    a100 = replace(a100, details=replace(a100.details, device="NVIDIA A100"))
    book.record("ada", "saxpy", "sha", result("saxpy", "passed", "gpu", a100), graded_on="NVIDIA A100 on n2")
    written = write_report(book.path, tmp_path / "out")
    students = {r["student"]: r for r in csv.DictReader(open(written["students_csv"], encoding="utf-8"))}
    assert students["ada"]["timed_on"] == "vector_add: NVIDIA H200; saxpy: NVIDIA A100"
    assert students["bob"]["timed_on"] == "", "a wrong answer's time was not counted"
    html = written["html"].read_text()
    assert "5 submissions timed by more than one GPU model (1 on NVIDIA A100, 4 on NVIDIA H200;" in html
    one_model = Gradebook(tmp_path / "one.sqlite")
    fill(one_model, GPU_SPEEDUPS)
    written = write_report(one_model.path, tmp_path / "out1")
    assert "timed_on" not in open(written["students_csv"], encoding="utf-8").readline()
    assert "5 submissions timed on NVIDIA H200;" in written["html"].read_text()


def test_a_gradebook_without_graded_on_gains_it(tmp_path):
    """Does a gradebook written before rows said where they were graded still open and take rows?"""
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE results (student TEXT NOT NULL, exercise TEXT NOT NULL, "
            "submission_sha256 TEXT, verdict TEXT NOT NULL, score REAL NOT NULL, max_score REAL "
            "NOT NULL, backend TEXT, result_json TEXT, graded_at REAL NOT NULL, "
            "PRIMARY KEY (student, exercise))"
        )
        db.execute("INSERT INTO results VALUES ('ada', 'vector_add', 'x', 'passed', 10, 10, 'gpu', NULL, 1)")
    book = Gradebook(path)
    book.record("bob", "vector_add", "y", result("vector_add", "passed"), graded_on="simulator on n1")
    assert {r.student: r.graded_on for r in book.rows()} == {"ada": None, "bob": "simulator on n1"}


def test_results_graded_without_the_sandbox_are_named_in_the_report(tmp_path):
    """Does the report say which results were graded with --unsandboxed (the page and
    students.csv), and say nothing of it when every result was sandboxed?"""
    from dataclasses import replace

    book = Gradebook(tmp_path / "book.sqlite")
    fill(book, GPU_SPEEDUPS)
    bare = replace(result("saxpy", "passed", "gpu", gpu_speed(1.5)), unsandboxed=True)
    book.record("ada", "saxpy", "sha", bare)
    written = write_report(book.path, tmp_path / "out")
    students = {r["student"]: r for r in csv.DictReader(open(written["students_csv"], encoding="utf-8"))}
    assert students["ada"]["unsandboxed"] == "saxpy" and students["bob"]["unsandboxed"] == ""
    html = written["html"].read_text()
    assert "Graded without the sandbox (1," in html and "ada/saxpy" in html
    sandboxed = Gradebook(tmp_path / "all.sqlite")
    fill(sandboxed, GPU_SPEEDUPS)
    written = write_report(sandboxed.path, tmp_path / "out1")
    assert "unsandboxed" not in open(written["students_csv"], encoding="utf-8").readline()
    assert "without the sandbox" not in written["html"].read_text()


# ---- a class graded for real, then reported -----------------------------------------------

SUBMISSIONS = ROOT / "tests" / "submissions"
GRADED_CLASS = {
    # student: {file name in their folder: what it holds}
    "ada": {
        "thread_ids.py": ROOT / "solutions/thread_ids.py",
        "reduce_sum.py": SUBMISSIONS / "reduce_sum/no_syncthreads.py",
    },
    "bob": {
        "thread_ids.py": SUBMISSIONS / "thread_ids/no_bounds_guard.py",
        "reduce_sum.py": SUBMISSIONS / "reduce_sum/plain_add.py",
    },
    "cy": {
        "thread_ids.py": SUBMISSIONS / "thread_ids/fixed_grid.py",
        "reduce_sum.py": ROOT / "exercises/reduce_sum.py",
    },
    "dee": {
        "SAXPY.py": ROOT / "solutions/saxpy.py",
        "notes.txt": "my notes\n",
        "thread_ids.py": ROOT / "exercises/thread_ids.py",
    },
    "eve": {"saxpy.py": ROOT / "solutions/saxpy.py", "reduce_sum.py": SUBMISSIONS / "reduce_sum/plain_store.py"},
}
EMOJI = re.compile("[\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001ffff]")
"""Glyphs that need an emoji (or symbol) font: never in a report or feedback."""


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """A small class graded by `zerogpu grade` (output not a terminal), then reported."""
    folder = tmp_path_factory.mktemp("graded") / "class"
    for student, files in GRADED_CLASS.items():
        (folder / student).mkdir(parents=True)
        for name, what in files.items():
            (folder / student / name).write_text(what if isinstance(what, str) else what.read_text())
    env = {**os.environ, "ZEROGPU_SECRET": "report-secret", "ZEROGPU_BACKEND": "simulator"}
    command = [sys.executable, "-m", "grader.cli", "grade", str(folder), "--workers", "2", "--timeout", "10"]
    command += ["--exercises", "thread_ids,saxpy,reduce_sum"]
    graded = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    written = write_report(folder / "gradebook.sqlite", folder.parent / "out")
    return graded.stdout, written


@pytest.mark.slow
def test_mistakes_are_counted_by_what_the_doctor_found(graded_class):
    """Are failing hand-ins counted by their mistake (a missing barrier apart from a missing
    atomic, though both are 'race'), falling back to the verdict, on the page and in the CSVs?"""
    _, written = graded_class
    report = written["report"]
    assert report.failures["race"] == 3
    assert report.mistakes == Counter(
        {
            "missing_barrier": 1,  # ada: no cuda.syncthreads() in the tree
            "missing_atomic": 1,  # bob: out[0] += ...
            "missing_bounds_guard": 1,  # bob: no `if i < n`
            "unwritten_tail": 1,  # cy: a fixed grid
            "blocks_overwrite": 1,  # eve: every block stores its partial into out[0]
        }
    )
    reduce_sum = read_csv(written["exercises_csv"])["reduce_sum"]
    assert (reduce_sum["race"], reduce_sum["not_attempted"]) == ("3", "1")
    html = written["html"].read_text()
    for label in ("missing barrier", "missing atomic", "missing bounds guard", "unwritten tail"):
        assert label in html
    assert not EMOJI.search(html)
    cells = {
        (r["student"], r["exercise"]): r for r in csv.DictReader(open(written["submissions_csv"], encoding="utf-8"))
    }
    bob = cells["bob", "reduce_sum"]
    assert (bob["verdict"], bob["mistake"], bob["cases_passed"], bob["cases"]) == ("race", "missing_atomic", "3", "6")
    assert bob["score"] == "5.0" and "Missing atomic" in bob["message"] and bob["line"] == "32"


@pytest.mark.slow
def test_each_cell_of_the_grid_opens_on_message_line_and_cases(graded_class):
    """Does every student x exercise cell open (no script) on its verdict, points, cases passed,
    message and line?"""
    _, written = graded_class
    html = written["html"].read_text()
    assert "<script" not in html
    opened = re.findall(r'<details><summary>.*?</summary><div class="pop">(.*?)</div></details>', html, re.S)
    assert len(opened) == len(GRADED_CLASS) * 3
    bob = next(o for o in opened if "reduce_sum: race" in o and "Missing atomic" in o)
    assert "5 / 10 points · 3 of 6 cases passed" in bob and "line 32:" in bob
    assert "Mistake: missing atomic" in bob
    untouched = next(o for o in opened if "reduce_sum: not attempted" in o)
    assert "handed in unchanged" in untouched


@pytest.mark.slow
def test_misnamed_and_stray_files_are_reported_with_the_reason(graded_class):
    """Are SAXPY.py (meant as saxpy.py) and notes.txt reported with why they were not graded, on
    the page, in the grid and in the CSVs, rather than as a bare 'not submitted'?"""
    output, written = graded_class
    assert "not graded: dee/SAXPY.py — not an exercise id: rename it saxpy.py to grade it" in output
    assert "dee/saxpy: not submitted (no saxpy.py, but SAXPY.py was handed in: rename it saxpy.py" in output
    assert re.search(r"\[\d+/\d+\] ada/thread_ids: passed", output), "plain progress lines, not a bar"
    report = written["report"]
    assert report.files == (
        ("dee", "SAXPY.py", "not an exercise id: rename it saxpy.py to grade it"),
        ("dee", "notes.txt", "not a .py file"),
    )
    assert report.not_graded == (
        ("dee", "saxpy", "no saxpy.py, but SAXPY.py was handed in: rename it saxpy.py to grade it"),
    )
    html = written["html"].read_text()
    assert "Needs a look" in html and "Files not graded (2)" in html and "Could not be graded (1)" in html
    assert "notes.txt" in html and "not a .py file" in html
    students = read_csv(written["students_csv"])
    assert "rename it saxpy.py" in students["dee"]["files_not_graded"]
    cells = {
        (r["student"], r["exercise"]): r for r in csv.DictReader(open(written["submissions_csv"], encoding="utf-8"))
    }
    assert cells["dee", "saxpy"]["verdict"] == NOT_SUBMITTED
    assert "SAXPY.py was handed in" in cells["dee", "saxpy"]["not_graded_because"]
    assert cells["ada", "saxpy"]["not_graded_because"] == "", "nothing handed in: nothing to explain"


@pytest.mark.slow
def test_the_page_names_the_engine_that_ran_the_cases(graded_class):
    """Results graded without a GPU ran on the kernel doctor: the page says so, not 'simulator'."""
    _, written = graded_class
    html = written["html"].read_text()
    assert re.search(r"Submissions graded: \d+ on the kernel doctor \(no GPU\)\.", html)
    assert "Correctness was graded on the CPU (the kernel doctor" in html


# ---- learner text in the report, the CSVs and the terminal ---------------------------------

FORMULA_NAMES = ('=HYPERLINK("http://evil.example","click")', "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)", "\tann")
ESCAPES = "\x1b[2J\x1b[32mPASSED\x1b[0m \x1b]52;c;Y2xpcGJvYXJk\x07 \u202eDESSAP"
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
"""Controls but tab and newline, bidirectional overrides and isolates, lone surrogates."""


def hostile_class(folder) -> Gradebook:
    """Students named like formulas, messages and source lines carrying escapes and formulas."""
    from dataclasses import replace

    book = Gradebook(folder / "gradebook.sqlite")
    for name in FORMULA_NAMES:
        case = CaseResult("ragged", {"n": 3}, "wrong_result", message=f"-1 {ESCAPES}", line=4, source=f"=cmd {ESCAPES}")
        wrong = replace(result("vector_add", "wrong_result"), message=f"=1+1 {ESCAPES}", cases=(case,))
        book.record(name, "vector_add", "sha", wrong)
        book.record(name, "thread_ids", "sha", result("thread_ids", "passed"))
    return book


def store_as_an_older_grader_did(book: Gradebook, student: str, exercise: str, data: dict) -> None:
    """A row whose JSON holds escaped lone surrogates (json.dumps writes them; a grader before
    results were cleaned at construction stored them so)."""
    with sqlite3.connect(book.path) as db:
        db.execute(
            "INSERT OR REPLACE INTO results (student, exercise, submission_sha256, verdict, score, max_score, "
            "backend, result_json, graded_at) VALUES (?, ?, 'sha', ?, 0, 10, 'gpu', ?, ?)",
            (student, exercise, data["verdict"], json.dumps(data), time.time()),
        )


def every_csv_cell(folder):
    for name in ("students.csv", "exercises.csv", "submissions.csv"):
        with open(folder / name, newline="", encoding="utf-8") as f:  # strict UTF-8: fails on a surrogate
            yield from (cell for row in csv.reader(f) for cell in row)


def test_no_csv_cell_from_a_learner_is_a_formula(tmp_path, capsys):
    """Names, messages and source lines starting with =, +, -, @ or a tab reach every CSV
    as text (a leading '), and nothing else in them changes."""
    hostile_class(tmp_path)
    assert main(["report", str(tmp_path)]) == 0
    out = tmp_path / "report"
    cells = list(every_csv_cell(out))
    for cell in cells:
        try:
            float(cell)
        except ValueError:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
    students = [r["student"] for r in csv.DictReader(open(out / "students.csv", encoding="utf-8"))]
    assert sorted(students) == sorted("'" + n for n in FORMULA_NAMES)
    rows = list(csv.DictReader(open(out / "submissions.csv", encoding="utf-8")))
    wrong = next(r for r in rows if r["verdict"] == "wrong_result")
    assert wrong["message"].startswith("'=1+1 ") and wrong["source"].startswith("'=cmd ")
    assert not any(UNSAFE.search(cell) for cell in cells)


def test_learner_escapes_reach_neither_the_page_nor_the_terminal(tmp_path, capsys):
    hostile_class(tmp_path)
    assert main(["report", str(tmp_path)]) == 0
    printed = capsys.readouterr()
    assert not UNSAFE.search(printed.out + printed.err)
    html = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert not UNSAFE.search(html) and "Y2xpcGJvYXJk" not in html
    assert "=1+1" in html and "HYPERLINK" in html, "the learner's text is still shown"


def test_a_lone_surrogate_anywhere_never_fails_the_report(tmp_path, capsys):
    """One lone surrogate once failed the report of the whole class. In a message, a source
    line, a mistake's name, a GPU's name: every file is written and valid UTF-8."""
    book = hostile_class(tmp_path)
    base = result("saxpy", "wrong_result").to_dict()
    forms = {
        "in a message": {**base, "message": "bad byte \udcff here"},
        "in a source line": {**base, "cases": [{**base["cases"][2], "line": 3, "source": "x = '\ud800'"}]},
        "in a mistake's name": {**base, "mistake": "odd\udcfe"},
        "in a GPU's name": {
            **result("saxpy", "passed", "gpu", gpu_speed(2.0)).to_dict(),
            "speed": {"measured": True, "details": {**gpu_speed(2.0).to_dict()["details"], "device": "H200 \udc80"}},
        },
    }
    for k, data in enumerate(forms.values()):
        store_as_an_older_grader_did(book, f"old{k}", "saxpy", data)
    assert main(["report", str(tmp_path)]) == 0, capsys.readouterr().err
    out = tmp_path / "report"
    html = (out / "report.html").read_text(encoding="utf-8")
    cells = list(every_csv_cell(out))
    assert not UNSAFE.search(html) and not any(UNSAFE.search(c) for c in cells)
    assert "bad byte \\udcff here" in cells, "shown as its escape, not dropped"
    assert "H200 \\udc80" in html


def test_a_32_mib_message_is_stored_and_reported_capped(tmp_path):
    from dataclasses import replace

    from grader.result import MAX_JSON

    book = Gradebook(tmp_path / "gradebook.sqlite")
    huge = replace(result("vector_add", "exception"), message="E" * (32 << 20))
    book.record("ann", "vector_add", "sha", huge)
    with sqlite3.connect(book.path) as db:
        (stored,) = db.execute("SELECT length(result_json) FROM results").fetchone()
    assert stored < MAX_JSON
    written = write_report(book.path, tmp_path / "out")
    assert written["html"].stat().st_size < 1 << 20
    (row,) = csv.DictReader(open(written["submissions_csv"], encoding="utf-8"))
    assert row["message"].endswith("characters cut)")


def test_exercises_csv_names_each_column_once(simulator_report):
    with open(simulator_report / "out" / "exercises.csv", newline="", encoding="utf-8") as f:
        header = next(csv.reader(f))
    assert len(header) == len(set(header)), [c for c in header if header.count(c) > 1]
    assert "passed" in header and "wrong_result" in header and "not_submitted" in header


def test_a_regraded_row_is_marked_on_the_page_and_in_submissions_csv(tmp_path):
    """A row regraded on its stored seed (the gradebook row's `regraded_from`: what it was) has a
    badge in its grid cell, a line saying what it was when it opens, and that in submissions.csv;
    the others have none."""
    from dataclasses import replace

    from grader.report.page import page
    from grader.report.write import submissions_csv

    book = Gradebook(tmp_path / "gradebook.sqlite")
    fill(book)
    bob = book.row("bob", "saxpy")
    book.record(
        "bob",
        "saxpy",
        bob.submission_sha256,
        bob.result,
        seed=bob.seed,
        regrade_of=replace(bob, verdict="passed", score=10.0, max_score=10.0),
    )
    report = analyse(book.rows())
    html = page(report, {"verdicts": b"", "speed": None, "scores": b""})
    assert html.count('class="cell re"') == 1 and "saxpy: wrong result (regraded)" in html
    assert html.count("Regraded on its stored seed (was passed, 10/10)") == 1
    assert "regraded: graded again since the class run" in html
    marked = {
        (r["student"], r["exercise"]): r["regraded"] for r in csv.DictReader(io.StringIO(submissions_csv(report)))
    }
    assert [key for key, flag in marked.items() if flag] == [("bob", "saxpy")]
    assert marked["bob", "saxpy"] == "was passed, 10/10"
    plain = page(
        analyse([replace(r, regraded_from=None) for r in book.rows()]), {"verdicts": b"", "speed": None, "scores": b""}
    )
    assert 'class="cell re"' not in plain and "regraded:" not in plain


DISTINCT = '''from numba import cuda


@cuda.jit
def weird(a, b, c):
    start = cuda.grid(1)
    step = cuda.gridsize(1)
    for k in range(start, c.shape[0], step):
        tmp = a[k]
        tmp = tmp + b[k]
        c[k] = tmp * 1.0


def launch(a, b, c):
    nthreads = 64
    nblocks = min(32, (c.shape[0] + nthreads - 1) // nthreads)
    weird[nblocks, nthreads](a, b, c)
'''
RENAMED = {"weird": "kern", "start": "s0", "step": "st", "tmp": "acc", "nthreads": "t", "nblocks": "bl", "k": "j"}
OWN = '''from numba import cuda


@cuda.jit
def add(x, y, out):
    j = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if j < out.size:
        out[j] = x[j] + y[j]


def launch(a, b, c):
    add[(c.size + {t} - 1) // {t}, {t}](a, b, c)
'''


def renamed(source: str) -> str:
    return re.sub(r"\b(" + "|".join(RENAMED) + r")\b", lambda m: RENAMED[m.group(1)], source)


def test_renamed_copies_are_paired_and_what_everyone_writes_is_not():
    """Are two hand-ins of one distinctive kernel paired though every name differs, while the
    solution handed in by many, the class's common idiom, short own versions and a file that does
    not tokenise pair with nothing?"""
    from grader.report.similarity import given_texts, similar_pairs, tokens

    solution = (ROOT / "solutions/vector_add.py").read_text()
    hand_ins = {
        "ann": DISTINCT,
        "bob": renamed(DISTINCT),
        "cy": solution,
        "dee": solution.replace("add_kernel", "k"),
        "eve": solution,
        "fay": OWN.format(t=128),
        "gus": OWN.format(t=256),
        "hal": "def launch(a, b, c:\n",
    }
    assert tokens(renamed(DISTINCT).encode()) == tokens(DISTINCT.encode())
    assert tokens(b"def launch(a, b, c:\n  '''") == []
    given = given_texts(["vector_add"])["vector_add"]
    pairs = similar_pairs("vector_add", {s: t.encode() for s, t in hand_ins.items()}, given)
    assert [(p.first, p.second) for p in pairs] == [("ann", "bob")] and pairs[0].score == 1.0
    assert pairs[0].usual < 0.5
    alike = {f"s{k}": solution.encode() for k in range(30)}
    assert similar_pairs("vector_add", alike, given) == [], "vector_add as everyone writes it floods nothing"
    assert similar_pairs("vector_add", alike, []) == [], "the class's own distribution alone holds it too"


def test_the_leaderboard_ranks_passing_gpu_timings_with_names_hidden(tmp_path):
    """From rows stored as a GPU run stores them: per exercise the fastest passing kernels with
    speedup and share of the ceiling, a wrong or untrusted timing never ranked, names shown only
    when asked; a class graded without a GPU says why there is no board."""
    from grader.report.leaderboard import NO_SPEEDS, boards, why_empty

    book = Gradebook(tmp_path / "book.sqlite")
    fill(book, GPU_SPEEDUPS)
    rows = book.rows()
    (board,) = [b for b in boards(rows) if b.exercise == "vector_add"]
    assert [(e.rank, e.student, e.speedup) for e in board.entries] == [
        (1, "eve", 2.6),
        (2, "ada", 2.0),
        (3, "gus", 1.8),
    ]
    assert board.entries[0].of_ceiling == 0.75 and "GB/s on NVIDIA H200" in board.entries[0].throughput
    hidden = write_report(book.path, tmp_path / "out")["html"].read_text()
    shown = write_report(book.path, tmp_path / "named", names=True)["html"].read_text()
    board_of = lambda page: page.split("<h2>Leaderboard</h2>")[1].split("<h2>")[0]  # noqa: E731
    assert "eve" not in board_of(hidden) and "hidden" in board_of(hidden) and "75%" in board_of(hidden)
    assert "eve" in board_of(shown) and "2.60×" in board_of(shown)
    plain = Gradebook(tmp_path / "cpu.sqlite")
    fill(plain)
    assert boards(plain.rows()) == () and why_empty(plain.rows()) == NO_SPEEDS
    page = write_report(plain.path, tmp_path / "cpu")["html"].read_text()
    assert "No speeds to rank." in board_of(page) and "<table" not in board_of(page)


def test_a_plain_class_gets_one_self_contained_feedback_page_per_student(simulator_report):
    """Does `zerogpu report` on a plain class write feedback/<student>.html for every student,
    each holding every exercise's card or why there is none, with no script or outside link,
    and link each student's name to it?"""
    pages = sorted((simulator_report / "out" / "feedback").iterdir())
    assert [p.stem for p in pages] == sorted(CLASS)
    bob = (simulator_report / "out" / "feedback" / "bob.html").read_text()
    assert bob.count('class="exercise"') == len(EXERCISES)
    assert "Not yet — out of bounds" in bob and "Nothing handed in for this exercise." in bob
    assert "<script" not in bob and "http" not in bob.replace("http-equiv", "")
    assert 'href="feedback/bob.html"' in (simulator_report / "out" / "report.html").read_text()


def test_every_writer_takes_surrogate_control_and_bidi_names(tmp_path, capsys):
    """A class whose folders and files are named with non-UTF-8 bytes, escapes, controls and a
    bidirectional override (two of them copying one kernel): grading's gradebook, every CSV
    (similarity.csv too), report.html, every feedback page and the terminal all take them:
    valid UTF-8, nothing unsafe, every student named."""
    from grader.classroom.grading import scan
    from grader.classroom.kind import kind_of
    from grader.cli.console import console, error
    from grader.cli.grade import Printer
    from grader.report.feedback import page_name

    names = [b"jos\xe9", "ctl\x1b[2J\x1b]52;c;Y2xp\x07".encode(), "rtl\u202egnp".encode(), b"=HYPERLINK(1)"]
    for raw, source in zip(names, (DISTINCT, renamed(DISTINCT), OWN.format(t=128), OWN.format(t=64))):
        folder = os.path.join(os.fsencode(tmp_path / "class"), raw)
        os.makedirs(folder)
        with open(os.path.join(folder, b"vector_add.py"), "w") as f:
            f.write(source)
        with open(os.path.join(folder, raw + b".txt"), "w") as f:
            f.write("x")
    found = scan(tmp_path / "class")
    book = Gradebook(tmp_path / "class" / "gradebook.sqlite")
    from grader.classroom.run import keep_notes

    keep_notes(book, found.tasks, {(s, n): why for s, n, why in found.strays}, "")
    for task in found.tasks:
        book.record(task.student, task.exercise, task.sha256, result("vector_add", "passed"), seed=1)
    assert kind_of(tmp_path / "class").kind == "class"
    assert main(["report", str(tmp_path / "class")]) == 0
    printed = capsys.readouterr()
    out = tmp_path / "class" / "report"
    cells = list(every_csv_cell(out)) + [
        c for row in csv.reader(open(out / "similarity.csv", encoding="utf-8")) for c in row
    ]
    pages = [p.read_text(encoding="utf-8") for p in sorted((out / "feedback").iterdir())]
    html = (out / "report.html").read_text(encoding="utf-8")
    for text in (html, *pages, *cells, printed.out, printed.err):
        assert not UNSAFE.search(text) and "Y2xp" not in text
    assert len(pages) == 4 and {page_name(t.student) for t in found.tasks} == {
        p.name for p in (out / "feedback").iterdir()
    }
    assert "jos\\udce9" in cells and "'=HYPERLINK(1)" in cells
    pair = next(csv.DictReader(open(out / "similarity.csv", encoding="utf-8")))
    assert {pair["exercise"], pair["score"]} == {"vector_add", "1.0"}
    shown = console()
    printer = Printer(shown)
    for task in found.tasks:
        printer.not_graded(f"{task.student}/x", "why \udcff\x1b[2J")
        printer.done(task, book.row(task.student, "vector_add").result)
    printer.summary(type("Run", (), {"needs_look": 1})(), tmp_path / "cl\x1bass")
    error(f"no such folder: {names[1].decode()}\udcff")
    printed = capsys.readouterr()
    assert not UNSAFE.search(printed.out + printed.err) and "jos\\udce9/vector_add: passed" in printed.out


def test_similarity_reads_only_the_files_graded_never_through_a_link(tmp_path):
    """Are a class folder's and a course's extracted hand-ins read again for similarity only when
    their hash is the row's (a file changed since grading is not), and never through a link?"""
    import hashlib

    from grader.report.similarity import hand_ins
    from grader.result.row import ClassRow

    def sha(text):
        return hashlib.sha256(text.encode()).hexdigest()

    cells = tmp_path / "course" / "zerogpu" / "submissions" / "warmup"
    for root in (tmp_path / "class", cells):
        for student, text in (("ann", DISTINCT), ("bob", "changed since\n")):
            (root / student).mkdir(parents=True)
            (root / student / "vector_add.py").write_text(text)
        (root / "cy").symlink_to(root / "ann")
    rows = [ClassRow(s, "vector_add", "passed", submission_sha256=sha(DISTINCT)) for s in ("ann", "bob", "cy")]
    for folder in (tmp_path / "class", tmp_path / "course"):
        assert hand_ins(folder, rows) == {("ann", "vector_add"): DISTINCT.encode()}
    assert hand_ins(None, rows) == {} and hand_ins(tmp_path / "nowhere", rows) == {}

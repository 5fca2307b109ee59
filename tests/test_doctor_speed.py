"""Speed estimates on the CPU: does a kernel that is correct but that a GPU would likely find too
slow (one thread or one block doing serial work; accesses far below the target's coalescing)
get the warning in its headline, as an estimate with no figure, and does no bundled solution or
valid alternative get one?

tests/doctor_cases/slow/<exercise>/ holds the slow forms; the first line names the warning."""

import re
from pathlib import Path

import pytest

from grader.checking.check import check_file
from grader.doctor.checkup import run_checkup
from grader.exercises import LADDER

TESTS = Path(__file__).parent
ROOT = TESTS.parent
SLOW_DIR = TESTS / "doctor_cases" / "slow"
SLOW = sorted(SLOW_DIR.glob("*/*.py"))
SPEED_KINDS = ("serial_work", "slow_memory")
GOOD = sorted(ROOT.glob("solutions/*.py")) + sorted((TESTS / "valid").glob("*/*.py"))


def _exercise(path: Path) -> str:
    return path.stem if path.parent.name == "solutions" else path.parent.name


@pytest.mark.parametrize("path", SLOW, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_slow_form_passes_with_the_estimate(path):
    """Right values, every case passed, and the doctor's speed warning of the expected kind,
    whose headline says a GPU would likely be too slow, without a number."""
    kind = re.fullmatch(r"# expect: (\w+)", path.read_text().splitlines()[0]).group(1)
    rows, report, _ = run_checkup(path.parent.name, path, seed=7)
    assert all(r["verdict"] == "passed" for r in rows), rows
    found = [f for f in report.findings if f.kind == kind]
    assert found, [(f.kind, f.message) for f in report.findings]
    headline = found[0].headline
    assert headline.startswith("a GPU would likely grade it too slow: "), headline
    assert not re.search(r"\d+(\.\d+)?\s*(%|ms|µs|s\b|x\b|×)", headline), headline
    assert "nothing was timed" in found[0].message


@pytest.mark.parametrize("path", GOOD, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_no_speed_warning_on_good_kernels(path):
    """Every solution and valid alternative: no estimate that a GPU would find it too slow.
    (`zerogpu doctor` runs `launch` itself: a grid sized from the device's SM count goes to the
    simulator there, which has no SM count; the whole check passes it, tests/test_replay.py.)"""
    rows, report, _ = run_checkup(_exercise(path), path, seed=7)
    assert report.ran_on_doctor or "get_current_device" in report.reason
    assert all(r["verdict"] == "passed" for r in rows) or not report.ran_on_doctor, rows
    assert not [f.message for f in report.findings if f.kind in SPEED_KINDS]


def test_the_estimate_heads_a_passed_check():
    """Through the whole check: full points, and the headline's first warning is the estimate."""
    path = TESTS / "doctor_cases" / "slow" / "transpose" / "naive_strided_writes.py"
    result = check_file("transpose", path, seed=7)
    assert result.passed and result.score == result.max_score, result.message
    assert result.warnings[0].startswith("a GPU would likely grade it too slow: kernel `transpose_kernel` writes")
    assert result.mistake == "uncoalesced"


@pytest.mark.parametrize("exercise_id", LADDER)
def test_a_starter_gets_no_speed_estimate(exercise_id):
    """A learner's first check, on the starter as shipped (a kernel that stores nothing, or a
    grid of one block): the verdict says what is missing, and no estimate that a GPU would find
    it too slow ("one block does all the work") sits beside a kernel that did no work."""
    rows, report, _ = run_checkup(exercise_id, ROOT / "exercises" / f"{exercise_id}.py", seed=7)
    assert not all(r["verdict"] == "passed" for r in rows)
    assert not [f.message for f in report.findings if f.kind in SPEED_KINDS]


def test_a_grid_left_one_block_short_is_told_its_verdict_not_a_speed_estimate():
    """The starter with its store written but `blocks = 1` left: the tail of `c` is unwritten,
    and the hint says to round the block count up; nothing claims one block does all the work."""
    result = check_file("vector_add", TESTS / "submissions" / "vector_add" / "one_block_grid.py", seed=7)
    assert result.verdict == "unwritten_output" and "round up" in result.hint, result.hint
    assert result.doctor is not None and result.doctor.ran_on_doctor
    assert not [f.message for f in result.doctor.findings if f.kind in SPEED_KINDS]


def test_the_scan_advice_goes_only_to_a_serial_scan_or_carry():
    """One block walking a reduction's whole array is told to spread the work over the grid, not
    how a scan carries between blocks; a serial carry between blocks is told both."""
    _, reduce_report, _ = run_checkup("reduce_sum", SLOW_DIR / "reduce_sum" / "one_block_grid_stride.py", seed=7)
    _, scan_report, _ = run_checkup("scan", SLOW_DIR / "scan" / "serial_carry_thread.py", seed=7)
    (one_block,) = [f for f in reduce_report.findings if f.kind == "serial_work"]
    (carry,) = [f for f in scan_report.findings if f.kind == "serial_work"]
    assert "blocks = ceil(n / threads_per_block)" in one_block.fix and "scan" not in one_block.fix
    assert "blocks' totals" in carry.fix
    assert "correct" not in one_block.message, "the doctor does not know whether the values are right"

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

TESTS = Path(__file__).parent
ROOT = TESTS.parent
SLOW = sorted((TESTS / "doctor_cases" / "slow").glob("*/*.py"))
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

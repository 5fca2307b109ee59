"""The simulator fallback fails closed on races: when the kernel doctor cannot run a kernel and
Numba's simulator runs it instead, is a race still found, named as the doctor names it, at the
marked line, and is the fixed twin still clean?

tests/doctor_cases/fallback holds kernels that go to the simulator today (one dynamic shared
buffer read as two dtypes, cooperative groups), each with one defect and a fixed twin."""

from pathlib import Path

import numpy as np
import pytest
from test_doctor_cases import load_case

from grader.backend import races
from grader.backend.simulator import install_if_simulating
from grader.doctor.execute import execute_or_simulate
from grader.doctor.findings import VERDICT
from grader.doctor.summary import SIMULATOR
from grader.steps.judge import judge_case

CASES = Path(__file__).parent / "doctor_cases" / "fallback"
BAD = [pytest.param(p, id=p.stem[: -len("_bad")]) for p in sorted(CASES.glob("*_bad.py"))]


@pytest.fixture(autouse=True)
def simulator_patched():
    install_if_simulating()


def run(path: Path):
    kind, marked, spec, launch, inputs, want = load_case(path)
    outcome = execute_or_simulate(spec, launch, inputs, dict(spec.cases[0].dims), (str(path),))
    return kind, marked, spec, outcome, want


@pytest.mark.parametrize("bad", BAD)
def test_race_found_on_the_simulator(bad):
    """Does the defective kernel, run by the simulator, fail as the doctor would fail it?"""
    kind, marked, _, outcome, _ = run(bad)
    assert outcome.report.executor == SIMULATOR, "the doctor ran it: this case no longer tests the fallback"
    hits = [f for f in outcome.report.findings if f.kind == kind and {f.line, f.other_line} & set(marked)]
    assert hits, [(f.kind, f.line, f.other_line, f.message) for f in outcome.report.findings]
    assert outcome.error is not None and outcome.error.verdict == VERDICT[kind] == "race", outcome.error
    assert outcome.error.message.startswith(outcome.report.findings[0].message)
    assert f"`{hits[0].array}" in hits[0].message and "thread" in hits[0].message
    assert outcome.error.hint == outcome.report.findings[0].fix


@pytest.mark.parametrize("bad", BAD)
def test_fixed_twin_passes_on_the_simulator(bad):
    """Does the same kernel, fixed, pass on the simulator with no finding?"""
    kind, _, spec, outcome, want = run(bad.with_name(bad.name.replace("_bad.py", "_fixed.py")))
    assert kind == "clean" and outcome.report.executor == SIMULATOR
    assert outcome.error is None and not outcome.report.findings, outcome.error
    if want is not None:
        tolerance = {k: 1e-5 * (1 + np.abs(v)) for k, v in want.items()}
        result = judge_case(spec, spec.cases[0], outcome, want, tolerance)
        assert result.verdict == "passed", result.message


def test_missing_atomic_names_both_threads_and_the_update():
    """Is a plain `+=` by two threads a missing atomic (the update named), not a missing barrier?"""
    _, _, _, outcome, _ = run(CASES / "shared_plain_add_bad.py")
    message = outcome.error.message
    assert message.startswith("Missing atomic:") and "`counts[staged[64 + tid]] += ...`" in message
    assert "cuda.atomic.add(counts, index, value)" in outcome.error.hint


def test_a_read_beside_an_update_is_a_missing_barrier():
    """`partial[tid] += partial[tid + stride]` without a barrier: the neighbour's element is only
    read, so the fix is a barrier, not an atomic."""
    _, _, _, outcome, _ = run(CASES / "tree_without_barrier_bad.py")
    assert outcome.error.mistake == "missing_barrier" and "cuda.syncthreads()" in outcome.error.hint


def test_between_blocks_is_named_so():
    """Do two blocks touching one global element make a race between blocks?"""
    _, _, _, outcome, _ = run(CASES / "halo_between_blocks_bad.py")
    kinds = {f.mistake or f.kind for f in outcome.report.findings}
    assert "race_between_blocks" in kinds, [f.message for f in outcome.report.findings]


def test_recording_is_off_outside_the_fallback():
    """The simulator records nothing unless the fallback asks: plain runs keep their speed."""
    assert races.RECORD is None
    run(CASES / "shared_plain_add_fixed.py")
    assert races.RECORD is None


def test_lesson_code_on_the_simulator_still_raises_on_a_race():
    """grader.doctor.run with a kernel only the simulator runs: does a race still raise?"""
    from grader.doctor import KernelDoctorError, run as run_cell

    _, _, _, launch, inputs, _ = load_case(CASES / "shared_plain_add_bad.py")
    bins = np.zeros(16, np.int32)
    with pytest.raises(KernelDoctorError, match="Missing atomic"):
        run_cell(launch, inputs["values"], bins)
    fixed = load_case(CASES / "shared_plain_add_fixed.py")[3]
    bins[:] = 0
    run_cell(fixed, inputs["values"], bins)
    assert (bins == np.bincount(inputs["values"] % 16, minlength=16)).all()


def test_a_store_beside_atomics_between_blocks_is_named_as_on_the_doctor():
    """Does the simulator's record name block 0's plain store to a total the other blocks add to
    atomically as the doctor does: the store, the atomic, two blocks, set it before the launch?"""
    _, _, _, outcome, _ = run(CASES / "store_beside_atomics_bad.py")
    finding = next(f for f in outcome.report.findings if f.kind == "race")
    assert finding.block != finding.other_block
    assert "stores to `out[0]`" in finding.message and "updates it with an atomic" in finding.message
    assert "before the launch" in finding.fix and outcome.error.hint == finding.fix

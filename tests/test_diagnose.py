"""Diagnoses that name the real mistake: does an unwritten or wrong output say which pattern it
follows (nothing written, the tail, the same elements in every block, a whole-number multiple),
with the fix of that mistake as the hint?"""

from pathlib import Path

import numpy as np
import pytest

from grader.checking.check import check_file
from grader.steps import diagnose

SUBMISSIONS = Path(__file__).parent / "submissions"


@pytest.mark.parametrize(
    "exercise_id, name, verdict, said, hinted",
    [
        (
            "vector_add",
            "ignores_block_index",
            "unwritten_output",
            "blocks wrote the same elements 0..255 (0..blockDim-1) — the index ignores cuda.blockIdx.x",
            "cuda.grid(1)",
        ),
        (
            "vector_add",
            "floor_division_grid",
            "unwritten_output",
            "The tail of `c` was never written: elements 128..250",
            "round up",
        ),
        ("vector_add", "never_stores", "unwritten_output", "Nothing was written to `c`", "stores its result"),
        (
            "vector_add",
            "two_apart",
            "unwritten_output",
            "The same elements are unwritten in every stretch of 2 of `c`: offsets 1 of each",
            "index arithmetic",
        ),
        (
            "reduce_sum",
            "every_thread_adds",
            "wrong_result",
            "The value is 256 x the expected: did 256 threads each add",
            "",
        ),
    ],
)
def test_message_names_the_mistake(exercise_id, name, verdict, said, hinted):
    result = check_file(exercise_id, SUBMISSIONS / exercise_id / f"{name}.py", seed=7, case_timeout=30)
    assert result.verdict == verdict
    assert said in result.message, result.message
    assert "round up" not in result.hint or "round up" in hinted, result.hint
    assert hinted in result.hint, result.hint


def test_wrong_result_shows_the_smallest_failing_cases_inputs():
    """The smallest wrong case's inputs, printed compactly: short arrays whole, long ones cut."""
    result = check_file("reduce_sum", SUBMISSIONS / "reduce_sum" / "every_thread_adds.py", seed=7)
    failing = [c for c in result.cases if c.verdict == "wrong_result"]
    smallest = min(failing, key=lambda c: c.total)
    assert result.message.startswith(f"Case '{smallest.name}'")
    assert "Inputs: x = [" in result.message
    assert diagnose.inputs_text({"x": np.arange(20.0)}) == (" Inputs: x = [0, 1, 2, 3, 4, 5, 6, 7, ... (20 values)].")
    assert diagnose.inputs_text({"x": np.array([1.5, -2.0], np.float32), "alpha": np.float32(3)}) == (
        " Inputs: x = [1.5, -2]; alpha = 3."
    )


def test_relation_needs_a_real_pattern():
    """A constant ratio or offset is named; random errors, or a single element's offset, are not."""
    want = np.linspace(1.0, 2.0, 10)
    bad = np.ones(10, bool)
    text, mistake = diagnose.relation(3 * want, want, bad)
    assert "is 3 x the expected" in text and mistake == "repeated_adds"
    text, mistake = diagnose.relation(want + 0.5, want, bad)
    assert "off by +0.5" in text and mistake == "constant_offset"
    noisy = want + np.random.default_rng(0).standard_normal(10)
    assert diagnose.relation(noisy, want, bad) == ("", "")
    assert diagnose.relation(want[:1] + 0.5, want[:1], bad[:1]) == ("", "")


class _Launched:
    """A doctor's report of one run: its launches' (grid, block)."""

    def __init__(self, *launches):
        self.launches = launches


@pytest.mark.parametrize(
    "got, want, report, said",
    [
        # lesson 00's demo, a vector add that subtracts: one element, (a - b) / (a + b) = -8
        ([-16.0], [2.0], _Launched(((1, 1, 1), (128, 1, 1))), ""),
        ([-3.0], [-1.0], _Launched(((1, 1, 1), (128, 1, 1))), ""),  # 3 x, but no 3 threads
        ([2.5], [1.0], None, ""),  # a fraction of a thread
        ([-2.0, -4.0, -6.0], [1.0, 2.0, 3.0], None, ""),  # a negative count of threads
        ([6.0, 6.0, 6.0], [2.0, 2.0, 2.0], None, ""),  # one expected value three times: one value
        ([3.0, 6.0, 9.0], [1.0, 2.0, 3.0], None, "Every value is 3 x the expected: did 3 threads"),
        ([256.0], [1.0], None, ""),  # a sum on the simulator: no launch to count threads in
        ([256.0], [1.0], _Launched(((4, 1, 1), (256, 1, 1))), "The value is 256 x the expected: did 256 threads"),
        ([1024.0], [1.0], _Launched(((4, 1, 1), (256, 1, 1))), "The value is 1024 x the expected"),  # the grid
        ([1.5], [1.0], None, ""),  # one offset: no pattern
        ([1.5, 2.5, 3.5], [1.0, 2.0, 3.0], None, "Every value is off by +0.5"),
    ],
)
def test_a_pattern_is_named_only_where_it_is_one(got, want, report, said):
    """A whole multiple needs three different expected values sharing it, or a count of the
    launch's threads; never a negative or fractional count; an offset needs three values."""
    got, want = np.array(got), np.array(want)
    text, mistake = diagnose.relation(got, want, np.ones(got.size, bool), report)
    assert (said in text) if said else text == "", text
    assert bool(mistake) == bool(said)


def test_unwritten_patterns_without_a_launch_record():
    """On Numba's simulator (no launch geometry) a block-sized prefix is named with both causes."""
    never = np.ones(1000, bool)
    never[:256] = False
    message, _, mistake = diagnose.unwritten("out", never)
    assert "ignores cuda.blockIdx.x) or only one block ran" in message and mistake == "index_ignores_block"
    never = np.zeros(1000, bool)
    never[900:] = True
    assert "tail" in diagnose.unwritten("out", never)[0]
    assert diagnose.unwritten("out", never)[2] == "unwritten_tail"


def test_unwritten_rows_say_which_fix_their_pattern_points_to():
    """Whole rows of a 2-D output unwritten: the last ones are a grid that stops short along y
    (or x and y crossed); the same rows of every stretch are a thread that moves one row of its
    tile where it owns several; others, blocks that write their tile elsewhere. None of the
    three speaks of a transpose: an exercise adds its own (kernels/transpose.py)."""
    never = np.zeros((45, 3), bool)
    never[32:] = True
    message, hint, mistake = diagnose.unwritten("out", never)
    assert mistake == "unwritten_region" and "Rows 32..44" in message
    assert "blocks along y" in hint and "transpose" not in hint, hint
    assert "blocks along x" in diagnose.unwritten("out", never.T.copy())[1]
    holes = np.zeros((45, 3), bool)
    holes[[r for r in range(45) if r % 32 >= 8]] = True
    message, hint, mistake = diagnose.unwritten("out", holes)
    assert mistake == "unwritten_stretches" and "rows 8..31 of each" in message and "loop" in hint, message
    message, hint, mistake = diagnose.unwritten("out", holes.T.copy())
    assert mistake == "unwritten_stretches" and "columns 8..31 of each" in message and "tx, tx +" in hint, hint
    middle = np.zeros((45, 3), bool)
    middle[10:20] = True
    message, hint, mistake = diagnose.unwritten("out", middle)
    assert mistake == "unwritten_region" and "where each block writes its tile" in hint and "transpose" not in hint


@pytest.mark.parametrize(
    "exercise_id, name, verdict, mistake",
    [
        ("reduce_sum", "no_syncthreads", "race", "missing_barrier"),
        ("reduce_sum", "plain_add", "race", "missing_atomic"),
        ("histogram", "shared_plain_add", "race", "missing_atomic"),
        ("reduce_sum", "plain_store", "race", "blocks_overwrite"),
        ("thread_ids", "no_bounds_guard", "out_of_bounds", "missing_bounds_guard"),
        ("stencil_1d", "negative_index_wraps", "out_of_bounds", "negative_index"),
        ("thread_ids", "fixed_grid", "unwritten_output", "unwritten_tail"),
        ("reduce_sum", "every_thread_adds", "wrong_result", "repeated_adds"),
        ("scan", "shuffle_in_branch", "race", "warp_divergence"),
    ],
)
def test_a_result_names_its_mistake(exercise_id, name, verdict, mistake):
    """Does a known-wrong submission's result name the mistake behind its verdict (what a class
    report counts: 'race' alone would lump a missing barrier with a missing atomic)?"""
    result = check_file(exercise_id, SUBMISSIONS / exercise_id / f"{name}.py", seed=3)
    assert (result.verdict, result.mistake) == (verdict, mistake)
    assert result.to_dict()["mistake"] == mistake


def test_a_correct_kernel_with_bank_conflicts_names_them(tmp_path):
    """Is a passed transpose whose tile is not padded named for its bank conflicts?"""
    from grader.exercises import ROOT

    unpadded = tmp_path / "transpose.py"
    unpadded.write_text((ROOT / "solutions" / "transpose.py").read_text().replace("(TILE, PADDED)", "(TILE, TILE)"))
    result = check_file("transpose", unpadded, seed=3)
    assert (result.verdict, result.mistake) == ("passed", "bank_conflicts")
    assert check_file("transpose", ROOT / "solutions" / "transpose.py", seed=3).mistake == ""


def test_every_finding_kind_names_a_known_mistake():
    """Does every kind of doctor finding map to a mistake a class report can label (a new kind
    must be named in grader.result.MISTAKES too)?"""
    from grader.doctor.findings import ORDER, Finding, mistake_of
    from grader.result import MISTAKES

    for kind in ORDER:
        assert mistake_of(Finding(kind, "error", "", block=(0,), other_block=(1,))) in MISTAKES, kind
    assert mistake_of(Finding("race", "error", "", block=(2,), other_block=(2,))) == "missing_barrier"


def test_a_one_element_output_is_spoken_of_as_one():
    """The starters' first failing case is often one element: 'not its one element', '1 of 1
    element is wrong', never 'not one of its 1 elements'."""
    message, _, mistake = diagnose.unwritten("out", np.ones(1, bool))
    assert message == "Nothing was written to `out`: not its one element." and mistake == "nothing_written"
    assert diagnose.unwritten("out", np.ones(7, bool))[0].endswith("not one of its 7 elements.")
    result = check_file("saxpy", SUBMISSIONS.parent.parent / "exercises" / "saxpy.py", seed=5)
    assert result.verdict == "wrong_result" and "1 of 1 element is wrong" in result.message, result.message

"""The judge: canaries, poison and tolerances on hand-made outcomes (no kernel runs)."""

import numpy as np
import pytest

from grader.exercises import exercise
from grader.steps.judge import SAMPLED, judge_case, judge_sampled
from grader.sentinels import PAD, fenced_buffer, output_view
from grader.steps.execute import Outcome
from grader.authoring.spec import Case


@pytest.fixture
def vector_add():
    return exercise("vector_add").spec


def outcome_with(values, spec, n, *, after=None, before=None):
    buf = fenced_buffer("float32", n, "poison")
    if values is not None:
        output_view(buf, (n,))[:] = values
    if after is not None:
        buf[PAD + n + after] = 1.0
    if before is not None:
        buf[PAD - before] = 1.0
    return Outcome({"c": buf}, None, 0.0)


def judge(spec, outcome, want, n, tol=1e-6):
    return judge_case(spec, Case("t", {"n": n}), outcome, {"c": want}, {"c": tol})


def test_exact_answer_passes(vector_add):
    want = np.arange(10, dtype=np.float64)
    assert judge(vector_add, outcome_with(want, vector_add, 10), want, 10).verdict == "passed"


def test_write_past_the_end_is_out_of_bounds(vector_add):
    """Is a write just past the last element reported, even when all values are right?"""
    want = np.arange(10, dtype=np.float64)
    result = judge(vector_add, outcome_with(want, vector_add, 10, after=0), want, 10)
    assert result.verdict == "out_of_bounds"
    assert "past the end of `c`" in result.message


def test_write_before_the_start_is_out_of_bounds(vector_add):
    want = np.arange(10, dtype=np.float64)
    result = judge(vector_add, outcome_with(want, vector_add, 10, before=1), want, 10)
    assert result.verdict == "out_of_bounds" and "before the start" in result.message


def test_unwritten_elements_are_counted_and_located(vector_add):
    values = np.arange(10, dtype=np.float32)
    out = outcome_with(values, vector_add, 10)
    out.buffers["c"][PAD + 7 : PAD + 10] = fenced_buffer("float32", 10, "poison")[PAD + 7 : PAD + 10]
    result = judge(vector_add, out, values.astype(np.float64), 10)
    assert result.verdict == "unwritten_output"
    assert result.unwritten == 3 and "elements 7..9" in result.message


def test_a_written_nan_is_wrong_not_unwritten(vector_add):
    """A kernel that writes NaN wrote something: wrong_result, not unwritten_output."""
    values = np.arange(10, dtype=np.float32)
    values[4] = np.nan
    result = judge(vector_add, outcome_with(values, vector_add, 10), np.arange(10.0), 10)
    assert result.verdict == "wrong_result" and result.wrong == 1


def test_mismatch_names_index_expected_and_got(vector_add):
    values = np.arange(10, dtype=np.float32)
    values[3] = 99.0
    result = judge(vector_add, outcome_with(values, vector_add, 10), np.arange(10.0), 10)
    assert result.verdict == "wrong_result"
    m = result.mismatches[0]
    assert (m.index, m.expected, m.got) == ((3,), 3.0, 99.0)
    assert "`c[3]` should be 3 but is 99" in result.message
    assert result.max_abs_error == pytest.approx(96.0)


def test_error_within_tolerance_passes(vector_add):
    values = np.arange(10, dtype=np.float32) + np.float32(1e-7)
    assert judge(vector_add, outcome_with(values, vector_add, 10), np.arange(10.0), 10, tol=1e-6).passed


def test_timed_outputs_are_judged_on_a_sample_that_still_catches_partial_answers(vector_add):
    """At benchmark sizes only SAMPLED elements are compared, yet an answer wrong in 1% of its
    elements, one never written in a corner, or a write past the end is still reported."""
    n = 4 * SAMPLED
    want = np.arange(n, dtype=np.float64)
    judge_big = lambda outcome: judge_sampled(vector_add, {"n": n}, outcome.buffers, {"c": want}, {"c": 0.5}, 7)  # noqa: E731
    assert judge_big(outcome_with(want, vector_add, n)) is None
    wrong = want.copy()
    wrong[::100] += 7.0
    assert "are wrong" in judge_big(outcome_with(wrong, vector_add, n))
    partial = outcome_with(want, vector_add, n)
    output_view(partial.buffers["c"], (n,))[n - n // 50 :] = np.nan  # the last 2% left poisoned
    assert "never written" in judge_big(partial) or "are wrong" in judge_big(partial)
    assert "past the end" in judge_big(outcome_with(want, vector_add, n, after=3))


def test_a_timed_output_sent_back_as_samples_is_judged_as_the_whole_would_be(vector_add):
    """A grading child sends back each output's canaries and the elements at the grading
    process's picks (`sampled_outputs`), not 512 MiB: the same verdicts, the same first wrong
    element, and a sample of the wrong size is refused rather than misread."""
    from grader.steps.judge import sampled_outputs

    n, seed = 4 * SAMPLED, 11
    want = np.arange(n, dtype=np.float64)
    wrong = want.copy()
    wrong[::100] += 7.0
    for values, after in ((want, 0), (wrong, 0), (want, 3)):
        whole = outcome_with(values, vector_add, n, after=after).buffers
        sent = sampled_outputs(vector_add, {"n": n}, whole, seed)
        assert sent["c"].size == SAMPLED + 2 * PAD
        verdicts = [
            judge_sampled(vector_add, {"n": n}, buffers, {"c": want}, {"c": 0.5}, seed, sampled=sampled)
            for buffers, sampled in ((whole, False), (sent, True))
        ]
        assert verdicts[0] == verdicts[1]
    short = {"c": sent["c"][: -PAD - 5]}
    assert "samples" in judge_sampled(vector_add, {"n": n}, short, {"c": want}, {"c": 0.5}, seed, sampled=True)


ACCUMULATES = """from numba import cuda


@cuda.jit
def add(a, b, c):
    i = cuda.grid(1)
    if i < c.size // 2 * 2:  # the last element of an odd length is never stored
        c[i] += a[i] + b[i]  # c starts as NaN: NaN + anything is NaN


def launch(a, b, c):
    add[(c.size + 31) // 32, 32](a, b, c)
"""


def test_unwritten_means_never_stored_to(vector_add, tmp_path):
    """An accumulator into an output that starts as NaN: on a GPU every NaN arithmetic makes is
    the canonical NaN, so the elements it stored to are wrong, not unwritten (x86 keeps the
    poison's payload; the doctor's write record decides). The one element never stored to is
    still unwritten."""
    from grader.doctor.execute import execute
    from grader.steps.load import load_launch

    path = tmp_path / "accumulates.py"
    path.write_text(ACCUMULATES)
    launch = load_launch(vector_add, ACCUMULATES, str(path))
    rng = np.random.default_rng(0)
    for n, verdict in ((10, "wrong_result"), (11, "unwritten_output")):
        inputs = {"a": rng.random(n, np.float32), "b": rng.random(n, np.float32)}
        outcome = execute(vector_add, launch, inputs, {"n": n}, (str(path),))
        want = (inputs["a"] + inputs["b"]).astype(np.float64)
        result = judge(vector_add, outcome, want, n)
        assert result.verdict == verdict, result.message
        assert result.unwritten == n % 2

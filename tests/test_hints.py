"""Hints: does the hint of a failed check teach the fix of the mistake its message names — the
doctor's first finding when there is one, the verdict's default only when there is none?"""

from pathlib import Path

import pytest

from grader.checking.check import check_file
from grader.exercises import ladder
from grader.result import MISTAKES, VERDICTS

SUBMISSIONS = Path(__file__).parent / "submissions"
ROOT = Path(__file__).parent.parent


@pytest.mark.parametrize(
    "exercise_id, name, wanted, unwanted",
    [
        # `out[0] += partial[0]`: a missing atomic between blocks, not a missing barrier
        ("reduce_sum", "plain_add", "cuda.atomic.add(out", "syncthreads"),
        # `local[v] += 1` in shared memory: a missing atomic within a block
        ("histogram", "shared_plain_add", "cuda.atomic.add(local", "syncthreads"),
        # `out[0] = partial[0]`: blocks overwrite each other (a race)
        ("reduce_sum", "plain_store", "cuda.atomic.add(out", "syncthreads"),
        # a shared histogram never zeroed
        ("histogram", "shared_not_zeroed", "before any thread reads it", "atomic"),
    ],
)
def test_hint_is_the_first_findings_fix(exercise_id, name, wanted, unwanted):
    result = check_file(exercise_id, SUBMISSIONS / exercise_id / f"{name}.py", seed=7, case_timeout=30)
    assert not result.passed
    assert wanted in result.hint and unwanted not in result.hint, (result.message, result.hint)
    first = next(f for f in result.doctor.findings if f.fix)
    assert result.hint == first.fix


@pytest.mark.parametrize(
    "exercise_id, name, mistake, wanted, unwanted",
    [
        # a local array where shared memory was meant: not "zero the local array"
        ("reduce_sum", "local_not_shared", "local_not_shared", "cuda.shared.array", "= 0"),
        # the index leaves out threadIdx.x: not a bounds guard, not `if i == 0`
        ("thread_ids", "index_without_thread", "index_ignores_thread", "cuda.threadIdx.x", "guard"),
        # the tile read back unswapped: not "zero the tile"
        ("transpose", "tile_not_swapped", "tile_not_swapped", "`tile[tx, ty + k]`", "zero"),
        # the tile written at the block's own position: a 2-D region, not a 1-D tail
        ("transpose", "block_not_swapped", "unwritten_region", "row bx * TILE", "tail"),
        # the carry between blocks, not the warp scan
        ("scan", "adds_own_total", "carry_own_total", "scanned_totals[b - 1]", "warp scan"),
        ("scan", "missing_carry", "missing_carry", "blocks 0..b-1", "warp scan"),
        ("scan", "exclusive", "exclusive_scan", "its own value", "carry"),
        # shfl_up in a reduction: lane 0 doubles its own value, not "1024 threads each add"
        ("warp_reduce", "shuffle_up", "shuffle_direction", "cuda.shfl_down_sync", "threads each add"),
        ("warp_reduce", "result_from_lane_31", "result_lane", "`if lane == 0:`", "shfl_up"),
        # saxpy keeps its grid on purpose: its unwritten tail wants the loop, not more blocks
        ("saxpy", "no_loop", "unwritten_tail", "cuda.gridsize(1)", "Launch enough blocks"),
        # softmax keeps one block per row: columns past the block want the loop over columns
        ("softmax_fused", "one_column_per_thread", "unwritten_region", "tid + THREADS", "blocks along x"),
        # the same rows of every tile unwritten: each thread moves 4 rows, not the tile's corner
        ("transpose", "one_row_per_thread", "unwritten_stretches", "ty + 8", "corner"),
        # the last rows or columns unwritten in a 2-D image: the grid, and no word of a transpose
        ("rgb_to_gray", "one_block_row", "unwritten_region", "blocks along y", "transpose"),
        ("rgb_to_gray", "crossed_grid", "unwritten_region", "blocks along x", "transpose"),
    ],
)
def test_the_hint_names_the_mistake_made(exercise_id, name, mistake, wanted, unwanted):
    """Learner-style mistakes whose hint once sent the learner elsewhere: does the hint now name
    the fix of the mistake made (and the check count it by that name)?"""
    result = check_file(exercise_id, SUBMISSIONS / exercise_id / f"{name}.py", seed=7, case_timeout=30)
    assert not result.passed and result.mistake == mistake, (result.mistake, result.message)
    assert wanted in result.hint, result.hint
    assert unwanted not in result.hint and unwanted not in result.message.split("Inputs:")[0], result.message


def test_an_index_past_the_end_gets_the_guards_fix():
    """An index outside an array has no doctor finding: its hint comes from where the index
    landed (one past the end: a `<=` guard, or none), not from the exercise's guess."""
    result = check_file("vector_add", SUBMISSIONS / "vector_add" / "no_bounds_guard.py", seed=7)
    assert result.verdict == "out_of_bounds"
    assert not any(f.fix for f in (result.doctor.findings if result.doctor else ()))
    assert "first one past the end" in result.hint and "`if i < n:`" in result.hint, result.hint


def test_a_guard_with_less_or_equal_is_told_why(tmp_path):
    """`if i <= out.size:` in a kernel with no loop: the hint names `<=` and the fix, where the
    exercise's own out-of-bounds hint talks about a grid-stride loop."""
    path = tmp_path / "saxpy.py"
    path.write_text(LESS_OR_EQUAL)
    result = check_file("saxpy", path, seed=7)
    assert result.verdict == "out_of_bounds"
    assert "`<=` instead of `<`" in result.hint and "`if i < n:`" in result.hint, result.hint


LESS_OR_EQUAL = """from numba import cuda


@cuda.jit
def saxpy_kernel(alpha, x, y, out):
    i = cuda.grid(1)
    if i <= out.size:
        out[i] = alpha * x[i] + y[i]


def launch(alpha, x, y, out):
    saxpy_kernel[(out.size + 255) // 256, 256](alpha, x, y, out)
"""


SERIAL_SCAN = """from numba import cuda


@cuda.jit
def serial(x, out):
    total = x.dtype.type(0)
    for i in range(x.size):
        total += x[i]
        out[i] = total


def launch(counts, amounts, counts_scan, amounts_scan):
    serial[1, 1](counts, counts_scan)
    serial[1, 1](amounts, amounts_scan)
"""


def _serial_carry() -> str:
    """The scan's solution with its carry between blocks done by one thread, in a loop."""
    source = (ROOT / "solutions" / "scan.py").read_text()
    recursion = "        scan(block_totals, scanned_totals)\n"
    assert recursion in source
    return source.replace(recursion, "        serial_carry[1, 1](block_totals, scanned_totals)\n") + (
        "\n\n@cuda.jit\ndef serial_carry(totals, scanned):\n    running = totals.dtype.type(0)\n"
        "    for b in range(totals.size):\n        running += totals[b]\n        scanned[b] = running\n"
    )


@pytest.mark.parametrize("source, kernel", [(SERIAL_SCAN, "serial"), (_serial_carry(), "serial_carry")])
def test_serial_work_is_named_in_a_passed_headline(tmp_path, source, kernel):
    """A scan that passes on the CPU but whose work one thread does (all of it, or the carry
    between blocks): full points, and a headline that says a GPU would likely find it too
    slow, as an estimate: no seconds, no speedup."""
    path = tmp_path / "scan.py"
    path.write_text(source)
    result = check_file("scan", path, seed=7)
    assert result.passed and result.score == result.max_score, result.message
    assert result.mistake == "serial_work"
    headline = result.warnings[0]
    assert headline.startswith("a GPU would likely grade it too slow: one thread does all the work"), headline
    assert f"`{kernel}`" in headline and not any(ch.isdigit() for ch in headline), headline


def test_a_parallel_scan_gets_no_speed_warning():
    result = check_file("scan", ROOT / "solutions" / "scan.py", seed=7)
    assert result.passed and result.warnings == (), result.warnings


@pytest.mark.parametrize(
    "name, verdict, wanted, unwanted, mistake_line, fixed_lines",
    [
        # block 0 adds the total of the block before it: `block > 0`, not "guard both ends"
        (
            "first_block_adds_the_one_before",
            "out_of_bounds",
            "`if block > 0:`",
            "0 <= j < n",
            "        out[i] += scanned_totals[block - 1]\n",
            "        if block > 0:\n            out[i] += scanned_totals[block - 1]\n",
        ),
        # no barrier after warp 0 scans the warps' totals: between the two lines, not "loop step"
        (
            "no_second_barrier",
            "race",
            "between line 46 and line 50",
            "loop step",
            "            warp_totals[lane] = total\n",
            "            warp_totals[lane] = total\n    cuda.syncthreads()\n",
        ),
    ],
)
def test_a_hint_followed_fixes_the_kernel(name, verdict, wanted, unwanted, mistake_line, fixed_lines, tmp_path):
    """A scan mistake whose hint once sent the learner elsewhere: does the hint say the fix, and
    does the kernel with that fix made pass?"""
    path = SUBMISSIONS / "scan" / f"{name}.py"
    result = check_file("scan", path, seed=7, case_timeout=30)
    assert result.verdict == verdict, result.message
    assert wanted in result.hint and unwanted not in result.hint, result.hint
    source = path.read_text()
    assert source.count(mistake_line) == 1
    fixed = tmp_path / "scan.py"
    fixed.write_text(source.replace(mistake_line, fixed_lines))
    after = check_file("scan", fixed, seed=7, case_timeout=30)
    assert after.passed, after.message


def test_an_exercises_hints_are_for_verdicts_and_named_mistakes():
    """A hint keyed by anything else would never be shown."""
    for ex in ladder():
        assert set(ex.spec.hints) <= set(VERDICTS) | set(MISTAKES), (ex.id, set(ex.spec.hints))


def test_the_saxpy_starter_is_taught_one_step_at_a_time(tmp_path):
    """The starter writes `out[i] = x[i]` on a grid a quarter of n: the smallest cases hold wrong
    values, the larger ones an unwritten tail too. The hint teaches the values first (not "launch
    more blocks", which this exercise forbids), then the loop; each step followed, the kernel
    passes."""
    source = (ROOT / "exercises" / "saxpy.py").read_text()
    path = tmp_path / "saxpy.py"
    path.write_text(source)
    first = check_file("saxpy", path, seed=7)
    assert first.verdict == "wrong_result" and "alpha * x[i] + y[i]" in first.hint, first.hint
    assert first.mistake == "", first.mistake  # the values' own case, not the tail of a later one
    formula = "        out[i] = x[i]  # TODO: out[i] = alpha * x[i] + y[i]\n"
    assert source.count(formula) == 1
    source = source.replace(formula, "        out[i] = alpha * x[i] + y[i]\n")
    path.write_text(source)
    second = check_file("saxpy", path, seed=7)
    assert second.verdict == "unwritten_output" and "cuda.gridsize(1)" in second.hint, second.hint
    assert "Launch enough blocks" not in second.hint
    guard = "    if i < out.size:\n        out[i] = alpha * x[i] + y[i]\n"
    assert source.count(guard) == 1
    path.write_text(
        source.replace(
            guard, "    for j in range(i, out.size, cuda.gridsize(1)):\n        out[j] = alpha * x[j] + y[j]\n"
        )
    )
    assert check_file("saxpy", path, seed=7).passed

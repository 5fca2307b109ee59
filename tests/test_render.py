"""How a result reads in the terminal, the notebook (HTML) and rich: speed figures only from a
GPU, and then with how they were measured."""

from rich.console import Console

from grader.checking.verdicts import NOT_ON_SIMULATOR
from grader.render import result_html, result_rich, result_text
from grader.result import CaseResult, CheckResult, Speed, SpeedDetails

GPU_SPEED = Speed(
    measured=True,
    details=SpeedDetails(
        summary="Speed: 0.495 ms at 134217728; 2.65x the baseline (IQR 2.63–2.66).",
        method="CUDA events around each launch, then a device-wide synchronize; …",
    ),
)


def result(speed: Speed, backend: str) -> CheckResult:
    case = CaseResult("one element", {"n": 1}, "passed")
    return CheckResult(
        exercise="saxpy",
        title="SAXPY",
        backend=backend,
        verdict="passed",
        message="All 1 cases passed.",
        hint="",
        cases=(case,),
        speed=speed,
        score=1.0,
        max_score=1.0,
        seed=7,
        seconds=0.1,
    )


def rich_text(r: CheckResult) -> str:
    console = Console(width=200, record=True)
    console.print(result_rich(r))
    return console.export_text()


def test_on_a_gpu_every_view_says_how_the_speed_was_measured():
    r = result(GPU_SPEED, "gpu")
    for shown in (result_text(r), result_html(r), rich_text(r)):
        assert "2.65x the baseline" in shown
        assert "How it was measured: CUDA events" in shown


def test_without_a_gpu_no_view_shows_a_speed_figure():
    r = result(NOT_ON_SIMULATOR, "simulator")
    for shown in (result_text(r), result_html(r), rich_text(r)):
        assert "not measured: no GPU" in shown
        assert "How it was measured" not in shown and " ms" not in shown


CHUNKED = '''
from numba import cuda

THREADS_PER_BLOCK = 128
PER_THREAD = 8


@cuda.jit
def add_kernel(a, b, c):
    start = cuda.grid(1) * PER_THREAD
    for j in range(start, min(start + PER_THREAD, c.size)):
        c[j] = a[j] + b[j]


def launch(a, b, c):
    threads = (c.size + PER_THREAD - 1) // PER_THREAD
    blocks = (threads + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    add_kernel[blocks, THREADS_PER_BLOCK](a, b, c)
'''


def test_a_pass_that_is_slow_on_a_gpu_says_so_in_every_headline(tmp_path):
    """Each thread adds 8 neighbouring elements: correct, but neighbouring threads are 32 bytes
    apart. Does every view's headline say so, and the JSON carry it?"""
    import json

    from grader.checking.check import check_file

    path = tmp_path / "chunked.py"
    path.write_text(CHUNKED)
    r = check_file("vector_add", path, seed=7)
    assert r.passed and r.warnings, r.message
    assert len(r.warnings) == 1, r.warnings  # one warning for one uncoalesced kernel
    said = r.warnings[0]
    assert said.startswith("a GPU would likely grade it too slow: kernel `add_kernel` reads `a`"), said
    assert r.mistake == "uncoalesced"
    assert f"PASSED — but {said}" in result_text(r).splitlines()[0]
    assert "Passed — but a GPU would likely grade it too slow" in result_html(r)
    assert "PASSED — but a GPU would likely grade it too slow" in rich_text(r)
    assert json.loads(r.to_json())["warnings"] == list(r.warnings)
    assert CheckResult.from_dict(json.loads(r.to_json())).warnings == r.warnings


NO_STRIDE = '''
from numba import cuda


@cuda.jit
def add_kernel(a, b, c):
    for j in range(cuda.grid(1), c.size):  # a grid-stride loop without its stride
        c[j] = a[j] + b[j]


def launch(a, b, c):
    add_kernel[2, 32](a, b, c)
'''


def test_a_crossed_grid_says_why_it_is_slow_once_in_every_view():
    """rgb_to_gray with x walking the rows: every case passes and reads and writes are both
    uncoalesced. Does the headline say a GPU would likely grade it too slow, and why, as one
    warning, and does the fix's paragraph appear once (not once per array, and again under the
    memory table) in the text, HTML and terminal views?"""
    from pathlib import Path

    from grader.checking.check import check_file

    crossed = Path(__file__).parent / "doctor_cases" / "slow" / "rgb_to_gray" / "crossed_grid.py"
    r = check_file("rgb_to_gray", crossed, seed=7)
    assert r.passed and r.score == r.max_score and r.mistake == "uncoalesced", r.message
    assert r.warnings == (
        "a GPU would likely grade it too slow: kernel `gray_kernel` reads `image` and writes `gray` with "
        "neighbouring threads far apart (`image[row, col, 0]`, `gray[row, col]`), so most of every memory "
        "transaction is bytes no thread asked for",
    )
    fix = "stage a tile in shared memory so that both sides run along rows"
    plain = " ".join(result_text(r).split())
    assert plain.count(fix) == 1 and plain.count("grade it too slow") == 2  # the headline, the finding
    assert result_html(r).count(fix) == 1
    assert " ".join(rich_text(r).split()).count(fix) == 1


def test_a_pass_whose_elements_many_threads_wrote_says_so_in_every_headline(tmp_path):
    """Every thread adds every element from its own index on: the right answer, each element
    stored by up to 64 threads. Full score, but no plain PASSED, and the report warns."""
    import json

    from grader.checking.check import check_file

    path = tmp_path / "no_stride.py"
    path.write_text(NO_STRIDE)
    r = check_file("vector_add", path, seed=7)
    assert r.passed and r.score == r.max_score, r.message
    wanted = "c[63] was written by 64 threads: each element should be written once; on a GPU this is wasted work and a data race"
    assert r.warnings[0] == wanted
    assert f"PASSED — but {wanted}" in result_text(r).splitlines()[0]
    assert f"Passed — but {wanted}" in result_html(r)
    assert "PASSED — but c[63] was written by 64 threads" in rich_text(r)
    finding = next(f for f in r.doctor.findings if f.kind == "duplicate_write")
    assert finding.severity == "warning" and "cuda.gridsize(1)" in finding.fix
    assert CheckResult.from_dict(json.loads(r.to_json())).warnings == r.warnings


def test_a_clean_pass_has_no_warning():
    from grader.checking.check import check_file
    from grader.exercises import exercise

    r = check_file("vector_add", exercise("vector_add").solution_file, seed=7)
    assert r.passed and r.warnings == ()
    first = result_text(r).splitlines()[0]
    assert ": PASSED  score" in first and "but" not in first


def test_feedback_uses_no_emoji():
    """Case marks are words, coloured by CSS or the terminal: no glyph that needs an emoji or
    symbol font, in any view of a passing or a failing result (the doctor's findings included)."""
    import re

    from grader.checking.check import check_file
    from grader.exercises import ROOT

    symbols = re.compile("[\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001ffff]")
    shown = result_html(result(NOT_ON_SIMULATOR, "simulator"))
    assert ">ok<" in shown and not symbols.search(shown)
    racy = check_file("reduce_sum", ROOT / "tests/submissions/reduce_sum/plain_add.py", seed=7)
    assert racy.verdict == "race" and racy.doctor is not None
    for view in (result_html(racy), result_text(racy), rich_text(racy)):
        assert "FAIL" in view and not symbols.search(view)


def test_code_in_messages_and_hints_is_set_as_code_in_html():
    """`code` in a message or hint shows as <code> in a notebook, escaped like the rest."""
    from grader.render import prose_html

    assert prose_html("guard with `if i < n:` <b>") == "guard with <code>if i &lt; n:</code> &lt;b&gt;"
    assert prose_html("no code here") == "no code here"

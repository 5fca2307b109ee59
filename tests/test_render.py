"""How a result reads in the terminal, the notebook (HTML) and rich: speed figures only from a
GPU, and then with how they were measured."""
from rich.console import Console

from grader.checking.pipeline import NOT_ON_SIMULATOR
from grader.render import result_html, result_rich, result_text
from grader.result import CaseResult, CheckResult, Speed

GPU_SPEED = Speed(measured=True, details={
    "summary": "Speed: 0.495 ms at 134217728; 2.65x the baseline (IQR 2.63–2.66).",
    "method": "CUDA events around each launch, then a device-wide synchronize; …",
})


def result(speed: Speed, backend: str) -> CheckResult:
    case = CaseResult("one element", {"n": 1}, "passed")
    return CheckResult(exercise="saxpy", title="SAXPY", backend=backend, verdict="passed",
                       message="All 1 cases passed.", hint="", cases=(case,), speed=speed,
                       score=1.0, max_score=1.0, seed=7, seconds=0.1)


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

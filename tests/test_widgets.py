"""The notebook pictures: the numbers they teach, their still fallback and their live wiring."""

import base64
import os
import subprocess
import sys

import pytest
from matplotlib.figure import Figure

from grader.notebook import charts

from grader.notebook import widgets
from grader.exercises import LADDER, ROOT
from grader.notebook.memory_pictures import TileStep, WarpAccess
from grader.notebook.pictures import GridLayout
from grader.result import CheckResult, Speed, SpeedDetails

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
H200 = {"name": "test GPU", "copy_bandwidth": 4.0e12, "fp32_flops": 6.0e13}


def _texts(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text"))]


# ---- grid -------------------------------------------------------------------------------


def test_rounding_up_launches_enough_blocks_and_the_guard_turns_the_rest_away():
    """n=20 with 8 threads per block: 3 blocks, 24 threads, threads 20-23 idle."""
    layout = widgets.grid_explorer(n=20, threads_per_block=8).model()
    assert layout.blocks == 3 and layout.threads == 24
    assert list(layout.idle_threads) == [20, 21, 22, 23]
    assert not layout.uncovered_elements


def test_floor_division_leaves_the_last_elements_unwritten():
    explorer = widgets.grid_explorer(n=20, threads_per_block=8).update(floor_division=True)
    layout = explorer.model()
    assert layout.blocks == 2 and not layout.idle_threads
    assert list(layout.uncovered_elements) == [16, 17, 18, 19]
    assert "never written" in explorer.text() and "16–19" in explorer.text()


def test_each_thread_gets_the_global_index_of_the_formula():
    layout = GridLayout(n=20, threads_per_block=8)
    assert layout.global_index(block=2, thread=3) == 2 * 8 + 3


def test_a_rejected_setting_leaves_the_explorer_unchanged():
    explorer = widgets.grid_explorer()
    with pytest.raises(ValueError):
        explorer.update(n=0)
    with pytest.raises(TypeError, match="settings"):
        explorer.update(blocks=4)
    assert explorer.state["n"] == 20


def test_a_grid_too_big_to_read_is_refused_plainly():
    with pytest.raises(ValueError, match="at most 256"):
        widgets.grid_explorer(n=1000)


# ---- coalescing -------------------------------------------------------------------------


def test_a_warp_walking_along_a_row_touches_four_sectors():
    explorer = widgets.coalescing(rows=8, cols=32, order="row")
    access = explorer.model()
    assert len(access.sectors) == 4 and access.bytes_fetched == access.bytes_used == 128
    assert "1 request: 4 sectors" in explorer.text()


def test_a_warp_walking_down_a_column_touches_one_sector_per_lane():
    explorer = widgets.coalescing(order="row").update(order="column")
    assert len(explorer.model().sectors) == 32
    assert "32 sectors" in explorer.text()


def test_short_rows_share_sectors_even_down_a_column():
    """Rows of 4 floats (16 B): two rows fit in one 32-byte sector."""
    assert len(WarpAccess(rows=32, cols=4, order="column").sectors) == 16


def test_an_unknown_order_is_refused():
    with pytest.raises(ValueError, match="row"):
        widgets.coalescing(order="diagonal")


# ---- tiling -----------------------------------------------------------------------------


@pytest.mark.parametrize("block", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_at_step_k_a_block_loads_its_row_of_a_and_its_column_of_b(block):
    bi, bj = block
    for k in range(2):
        step = TileStep(n=8, tile=4, block_row=bi, block_col=bj, k=k)
        assert (step.a_tile, step.b_tile, step.c_tile) == ((bi, k), (k, bj), (bi, bj))


def test_a_ragged_last_tile_is_clipped_to_the_matrix():
    step = TileStep(n=10, tile=4, block_row=0, block_col=0, k=0)
    assert step.steps == 3 and step.span(2) == range(8, 10)


def test_the_tiling_caption_follows_the_chosen_step_and_block():
    explorer = widgets.tiling_animation(n=8, tile=4).update(block_row=1, k=1)
    assert explorer.text().startswith("Step 2 of 2 (k = 1): block (1, 0) loads A tile (1, 1) and B tile (1, 0)")
    with pytest.raises(ValueError):
        explorer.update(k=2)


# ---- roofline ---------------------------------------------------------------------------


def test_without_ceilings_the_roofline_says_so_and_shows_no_number():
    point = {"label": "mine", "flops": 1e9, "bytes": 1e8, "seconds": 1e-3}
    explorer = widgets.roofline(points=[point])
    assert "No GPU figures available" in explorer.text()
    texts = _texts(explorer.figure())
    assert any("No GPU figures available" in t for t in texts)
    assert not any(ch.isdigit() for t in texts for ch in t), texts


def test_a_measured_point_sits_at_flops_per_byte():
    point = {"label": "mine", "flops": 2e12, "bytes": 1e10, "seconds": 0.1}
    fig = widgets.roofline([point], H200).figure()
    markers = [line for line in fig.axes[0].lines if line.get_marker() == "o"]
    assert len(markers) == 1
    assert markers[0].get_xdata()[0] == pytest.approx(200.0)  # 2e12 FLOP / 1e10 B
    assert markers[0].get_ydata()[0] == pytest.approx(20_000.0)  # GFLOP/s
    assert charts.roof_gflops(200.0, H200) == pytest.approx(60_000.0)


def test_a_kernel_without_flops_is_listed_by_bandwidth_not_placed():
    copy = {"label": "vector_add", "flops": 0.0, "bytes": 2e9, "seconds": 1e-3}
    explorer = widgets.roofline([copy], H200)
    assert "50% of the copy bandwidth" in explorer.text()
    assert not [line for line in explorer.figure().axes[0].lines if line.get_marker() == "o"]


def _result(exercise, measured, verdict="passed", tier=None):
    details = {
        "yours_ms": 2.0,
        "dims": {"m": 64, "k": 32, "n": 16},
        "bound": "compute",
        "device": "test GPU",
        "tier": tier,
        "throughput": {"unit": "TFLOP/s", "achieved": 1.0, "fraction_of_ceiling": 0.1},
        "ceilings": {"copy_bandwidth_GBps": 4000.0, "fp32_TFLOPs": 60.0},
    }
    speed = Speed(measured=True, details=SpeedDetails.from_dict(details)) if measured else Speed(False, "no GPU")
    return CheckResult(
        exercise, exercise, "gpu" if measured else "simulator", verdict, "", "", (), speed, 10.0, 10.0, 1
    )


def test_points_come_from_measured_results_only():
    results = [_result("matmul_naive", measured=True), _result("vector_add", measured=False)]
    for given in (results, [r.to_dict() for r in results]):
        [point] = widgets.roofline_points_from_results(given)
        assert point["label"] == "matmul_naive" and point["seconds"] == pytest.approx(2e-3)
        assert point["flops"] == 2.0 * 64 * 32 * 16
        assert point["bytes"] == 4.0 * (64 * 32 + 32 * 16 + 64 * 16)
    ceilings = widgets.ceilings_from_results(results)
    assert ceilings["copy_bandwidth"] == pytest.approx(4e12)
    assert ceilings["fp32_flops"] == pytest.approx(6e13)
    assert widgets.ceilings_from_results(results[1:]) is None


# ---- progress ---------------------------------------------------------------------------


def test_progress_shows_every_exercise_and_what_to_do_next():
    status = {"thread_ids": "passed", "vector_add": {"status": "passed", "tier": "great"}, "saxpy": "attempted"}
    text = widgets.progress(status).text()
    assert all(exercise_id in text for exercise_id in LADDER)
    assert f"2 of {len(LADDER)} passed" in text and "speed: great" in text
    assert text.splitlines()[-1].startswith("Next: saxpy")


def test_when_everything_passes_the_next_step_is_speed():
    text = widgets.progress({exercise_id: "passed" for exercise_id in LADDER}).text()
    assert f"{len(LADDER)} of {len(LADDER)} passed" in text and "speed tier" in text.splitlines()[-1]


def test_progress_reads_the_local_record_by_default(monkeypatch, tmp_path):
    """An empty home: nothing started, so the first rung is next."""
    monkeypatch.setenv("ZEROGPU_HOME", str(tmp_path))
    rungs = widgets.progress().model()
    assert {r.state for r in rungs} == {"not started"}
    assert charts.next_rung(list(rungs)).id == LADDER[0]


def test_progress_accepts_check_results_with_their_tier():
    status = {
        "saxpy": _result("saxpy", measured=True, tier="near the limit"),
        "vector_add": _result("vector_add", measured=False, verdict="wrong_result"),
    }
    rungs = {r.id: r for r in widgets.progress(status).model()}
    assert (rungs["saxpy"].state, rungs["saxpy"].tier) == ("passed", "near the limit")
    assert rungs["vector_add"].state == "attempted"


# ---- display ----------------------------------------------------------------------------

ALL = {
    "grid": lambda: widgets.grid_explorer(),
    "coalescing": lambda: widgets.coalescing(),
    "tiling": lambda: widgets.tiling_animation(),
    "roofline": lambda: widgets.roofline(),
    "progress": lambda: widgets.progress({}),
}


@pytest.mark.parametrize("name", ALL)
def test_outside_a_kernel_the_display_is_a_picture_and_text(name):
    bundle = ALL[name]()._repr_mimebundle_()
    assert base64.b64decode(bundle["image/png"]).startswith(PNG_SIGNATURE)
    assert bundle["text/plain"].strip()
    assert widgets.WIDGET_MIME not in bundle


def test_in_a_kernel_the_live_widget_comes_with_the_picture(monkeypatch):
    monkeypatch.setattr(widgets, "_kernel_running", lambda: True)
    bundle = widgets.tiling_animation()._repr_mimebundle_()
    assert "model_id" in bundle[widgets.WIDGET_MIME]
    assert "image/png" in bundle and "text/plain" in bundle


def test_moving_a_slider_redraws_and_update_moves_the_slider():
    explorer = widgets.tiling_animation()
    explorer.widget()
    before = explorer._image.value
    explorer._values["k"].value = 1  # what dragging the slider does
    assert explorer.state["k"] == 1 and explorer._image.value != before
    explorer.update(block_col=1)
    assert explorer._values["block_col"].value == 1


def test_figures_stay_out_of_pyplot():
    import matplotlib.pyplot as plt

    open_before = plt.get_fignums()
    fig = widgets.grid_explorer().figure()
    assert isinstance(fig, Figure) and plt.get_fignums() == open_before


def test_importing_the_widgets_does_not_import_numba():
    """Notebooks import it after `import grader`; numba must still be free to be chosen later."""
    code = "import sys, grader.notebook.widgets; sys.exit('numba' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "ZEROGPU_BACKEND": "simulator"},
    )
    assert done.returncode == 0, done.stderr or "numba was imported"


def test_a_check_in_a_notebook_states_its_limit_follows_the_case_and_clears(monkeypatch):
    """In a notebook's kernel, grader.check shows one line: each case's time limit first, then
    the case under way, and nothing once the result shows."""
    import IPython
    import IPython.display

    import grader
    from grader.exercises import exercise
    from grader.steps.load import load_launch

    shown = []

    class Handle:
        def update(self, obj):
            shown.append(obj.data)

    monkeypatch.setattr(IPython, "get_ipython", lambda: type("Kernel", (), {"kernel": object()})())
    monkeypatch.setattr(IPython.display, "display", lambda obj, display_id=None: shown.append(obj.data) or Handle())
    endless = ROOT / "tests" / "submissions" / "saxpy" / "forgets_stride.py"
    launch = load_launch(exercise("saxpy").spec, endless.read_text(), str(endless))
    result = grader.check("saxpy", launch, case_timeout=2)
    assert result.verdict == "timeout"
    assert "Checking saxpy: 8 cases, each may take up to 2 s." in shown[0]
    assert any("case 1 of 8" in line and "of 2 s" in line for line in shown[1:-1]), shown
    assert shown[-1] == ""

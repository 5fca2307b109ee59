"""Teaching pictures for the notebooks: live controls in JupyterLab, a still picture elsewhere.

Each function returns an `Explorer`. Displayed in a running kernel it offers sliders over
its picture; its display bundle also carries a PNG of the current state and a text summary,
so nbconvert, nbclient outputs, GitHub and terminals show the picture (or text) instead of
a dead widget. `.figure()` gives the matplotlib Figure, `.update(...)` changes the state.

Models, drawings and text twins live in grader/notebook/pictures.py, grader/notebook/memory_pictures.py and
grader/notebook/charts.py, without widgets.
No numba here: notebooks import this after `import grader` chose the back end.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Mapping

from grader.exercises import LADDER, exercise
from grader.learner.progress import ladder_status
from grader.notebook import charts, pictures
from grader.notebook import memory_pictures as memory
from grader.result import CheckResult, SpeedDetails

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
STATES = ("passed", "attempted", "not started")


@dataclass(frozen=True)
class Control:
    """A widget for one setting: `build(value)` -> (what to show, the widget holding the value)."""

    name: str
    build: Callable[[Any], tuple]


class Explorer:
    """A picture of `model(**state)` with optional controls over the state."""

    def __init__(self, model, draw, describe, state: dict, controls=()):
        self._model, self._draw, self._describe = model, draw, describe
        self.state = dict(state)
        self.model()  # refuse impossible settings now, not at display time
        self._controls = tuple(controls)
        self._values = {}  # setting name -> the widget that holds it, once built
        self._image = self._view = None
        self._png = (None, b"")  # (state it was drawn for, bytes): one render per state

    def model(self):
        """The numbers behind the current picture (blocks, sectors, tiles...)."""
        return self._model(**self.state)

    def figure(self):
        """The matplotlib Figure for the current state (not registered with pyplot)."""
        return self._draw(self.model())

    def text(self) -> str:
        return self._describe(self.model())

    def png(self) -> bytes:
        if self._png[0] != self.state:
            self._png = (dict(self.state), pictures.png_bytes(self.figure()))
        return self._png[1]

    def update(self, **changes) -> "Explorer":
        """Change settings, e.g. `.update(k=1)`; the live view follows."""
        unknown = set(changes) - set(self.state)
        if unknown:
            raise TypeError(f"unknown setting {sorted(unknown)}; settings: {sorted(self.state)}")
        self._model(**{**self.state, **changes})  # raises ValueError before anything changes
        self.state.update(changes)
        self._refresh_view()
        return self

    def widget(self):
        """The ipywidgets view (controls over an image), built once."""
        if self._view is None:
            import ipywidgets as w

            self._image = w.Image(value=self.png(), format="png", layout=w.Layout(max_width="100%", height="auto"))
            shown = [self._build_control(control) for control in self._controls]
            row = w.HBox(shown, layout=w.Layout(flex_flow="row wrap"))
            self._view = w.VBox([row, self._image] if shown else [self._image])
        return self._view

    def _build_control(self, control: Control):
        shown, holder = control.build(self.state[control.name])
        holder.observe(partial(self._on_control, control.name), names="value")
        self._values[control.name] = holder
        return shown

    def _on_control(self, name, change):
        if change["new"] != self.state[name]:
            self.update(**{name: change["new"]})

    def _refresh_view(self):
        for name, holder in self._values.items():
            if holder.value != self.state[name]:
                holder.value = self.state[name]
        if self._image is not None:
            self._image.value = self.png()

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": self.text(), "image/png": base64.b64encode(self.png()).decode("ascii")}
        view = self._live_view()
        if view is not None:
            bundle[WIDGET_MIME] = view._repr_mimebundle_()[WIDGET_MIME]
        return bundle

    def _live_view(self):
        """The widget, only where a kernel can drive it; otherwise the PNG stands alone."""
        if not self._controls or not _kernel_running():
            return None
        try:
            return self.widget()
        except Exception:  # no ipywidgets or no comm: the still picture is enough
            return None

    def __repr__(self) -> str:
        return self.text()


def _kernel_running() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


# ---- controls ---------------------------------------------------------------------------


def _int_slider(label: str, low: int, high: int, play_ms: int | None = None) -> Callable:
    def build(value):
        import ipywidgets as w

        slider = w.IntSlider(
            value=value,
            min=low,
            max=high,
            description=label,
            continuous_update=play_ms is not None,
            style={"description_width": "initial"},
        )
        if play_ms is None:
            return slider, slider
        play = w.Play(value=value, min=low, max=high, interval=play_ms, description="play")
        w.jslink((play, "value"), (slider, "value"))  # runs in the browser: smooth playback
        return w.HBox([play, slider]), slider

    return build


def _checkbox(label: str) -> Callable:
    def build(value):
        import ipywidgets as w

        box = w.Checkbox(value=value, description=label, indent=False)
        return box, box

    return build


def _toggle(label: str, options: tuple) -> Callable:
    def build(value):
        import ipywidgets as w

        buttons = w.ToggleButtons(
            options=options, value=value, description=label, style={"description_width": "initial"}
        )
        return buttons, buttons

    return build


# ---- 1. grid ----------------------------------------------------------------------------


def grid_explorer(n=20, threads_per_block=8) -> Explorer:
    """Blocks of threads over n elements: global index, bounds guard, the floor-division bug."""
    state = {"n": n, "threads_per_block": threads_per_block, "floor_division": False}
    controls = (
        Control("n", _int_slider("n (elements)", 1, max(64, n))),
        Control("threads_per_block", _int_slider("threads per block", 1, max(32, threads_per_block))),
        Control("floor_division", _checkbox("use floor division (n // threads)")),
    )
    return Explorer(pictures.GridLayout, pictures.draw_grid, pictures.describe_grid, state, controls)


# ---- 2. coalescing ----------------------------------------------------------------------


def coalescing(rows=8, cols=32, order="row") -> Explorer:
    """The 32-byte sectors one warp touches reading along a row vs down a column."""
    controls = (Control("order", _toggle("threadIdx.x walks along a", ("row", "column"))),)
    return Explorer(
        memory.WarpAccess,
        memory.draw_coalescing,
        memory.describe_warp,
        {"rows": rows, "cols": cols, "order": order},
        controls,
    )


# ---- 3. tiling --------------------------------------------------------------------------


def tiling_animation(n=8, tile=4) -> Explorer:
    """Step k of a shared-memory tiled C = A @ B for one chosen block."""
    steps = max(1, -(-n // tile)) if tile >= 1 else 1
    state = {"n": n, "tile": tile, "block_row": 0, "block_col": 0, "k": 0}
    controls = (
        Control("k", _int_slider("step k", 0, steps - 1, play_ms=1500)),
        Control("block_row", _int_slider("block row (blockIdx.y)", 0, steps - 1)),
        Control("block_col", _int_slider("block column (blockIdx.x)", 0, steps - 1)),
    )
    return Explorer(memory.TileStep, memory.draw_tiling, memory.tiling_caption, state, controls)


# ---- 4. roofline ------------------------------------------------------------------------


def roofline(points=None, ceilings=None) -> Explorer:
    """Measured kernels under this GPU's measured roofs; only the shape when there are none."""
    state = {"points": tuple(points or ()), "ceilings": ceilings}
    return Explorer(charts.Roofline, charts.draw_roofline, charts.describe_roofline, state)


def roofline_points_from_results(results) -> list[dict]:
    """Roofline points from CheckResults (or their to_dict()); unmeasured ones are skipped."""
    points = []
    for result in map(_as_result, results):
        details = _measured_details(result)
        if details is None:
            continue
        flops, bytes_moved = _work_done(result.exercise, details)
        points.append(
            {"label": result.exercise, "flops": flops, "bytes": bytes_moved, "seconds": details.yours_ms / 1e3}
        )
    return points


def ceilings_from_results(results) -> dict | None:
    """The measured ceilings a GPU result carries (the same for every result of one GPU)."""
    for result in map(_as_result, results):
        details = _measured_details(result)
        if details and (details.ceilings.copy_bandwidth_GBps or details.ceilings.fp32_TFLOPs):
            c = details.ceilings
            return {
                "name": details.device,
                "copy_bandwidth": c.copy_bandwidth_GBps * 1e9,
                "fp32_flops": c.fp32_TFLOPs * 1e12,
            }
    return None


def _as_result(result) -> CheckResult:
    """A CheckResult, also from its JSON form (`to_dict()`, as a lesson may have saved it)."""
    return CheckResult.from_dict(result) if isinstance(result, Mapping) else result


def _measured_details(result: CheckResult) -> SpeedDetails | None:
    """A result's measured speed; None also for a check that did not run (`cells.NotChecked`)."""
    speed = getattr(result, "speed", None)
    details = speed.details if speed is not None else None
    return details if details is not None and details.yours_ms else None


def _work_done(exercise_id: str, details: SpeedDetails) -> tuple[float, float]:
    """(FLOPs, bytes) the exercise's benchmark counts at the timed sizes."""
    bench = exercise(exercise_id).spec.benchmark  # loads kernels/<id>.py, which imports numba
    return float(bench.flops(details.dims)), float(bench.bytes_moved(details.dims))


# ---- 5. progress ------------------------------------------------------------------------


def progress(status=None) -> Explorer:
    """The ladder: which exercises pass, the best speed tier when known, what to do next.

    `status` maps exercise id -> "passed" / "attempted", a dict {"status", "tier"}, or a
    CheckResult; by default it is read from this learner's local record.
    """
    if status is None:
        status = ladder_status()
    return Explorer(_ladder, charts.draw_ladder, charts.describe_ladder, {"status": dict(status)})


def _ladder(status: dict) -> tuple:
    return tuple(
        charts.Rung(stage, exercise_id, *_state_and_tier(status.get(exercise_id)))
        for stage, exercise_id in enumerate(LADDER)
    )


def _state_and_tier(entry) -> tuple:
    if entry is None:
        return "not started", None
    if isinstance(entry, str):
        state, tier = entry, None
    elif isinstance(entry, Mapping) and "verdict" not in entry:
        state, tier = entry.get("status", "not started"), entry.get("tier")
    else:  # a CheckResult or its to_dict()
        result = _as_result(entry)
        state = "passed" if result.passed else "attempted"
        details = _measured_details(result)
        tier = details.tier if details else None
    if state not in STATES:
        raise ValueError(f"unknown status {state!r}; expected one of {STATES}")
    return state, tier

"""Compare what a run left behind with the oracle: canaries, poison, then values."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from grader.steps import collectives, diagnose
from grader.sentinels import PAD, canary_value, output_view, poison_value, same_bits
from grader.steps.execute import Outcome
from grader.result import CaseResult, Mismatch
from grader.authoring.spec import Case, Spec

SHOWN = 5
"""Wrong elements listed per case."""


def _index(flat: int, shape: tuple) -> tuple:
    return tuple(int(i) for i in np.unravel_index(flat, shape))


def _fmt_index(index: tuple) -> str:
    return ", ".join(map(str, index))


def _fence_hit(spec: Spec, outcome: Outcome, sizes: dict | None = None) -> tuple[str, str] | None:
    """(message, mistake) when the kernel wrote before the start or past the end of an output.
    `sizes`: each output's element count, where a buffer holds samples between its fences."""
    for array in spec.outputs:
        buf = outcome.buffers[array.name]
        size = sizes[array.name] if sizes else buf.size - 2 * PAD
        inside = buf.size - 2 * PAD
        fence = canary_value(array.dtype)
        before = np.flatnonzero(~same_bits(buf[:PAD], fence))
        after = np.flatnonzero(~same_bits(buf[PAD + inside :], fence))
        if after.size:
            return (
                f"Your kernel wrote past the end of `{array.name}` (up to {after[-1] + 1} "
                f"element(s) after its last one, which has {size} elements). "
                "Threads whose index is out of range must not write.",
                "missing_bounds_guard",
            )
        if before.size:
            return (
                f"Your kernel wrote before the start of `{array.name}` "
                f"({PAD - before[0]} element(s) before index 0): a negative index?",
                "negative_index",
            )
    return None


def _compare(array, got: np.ndarray, want: np.ndarray, tol) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(never written, |error| with NaN as inf, wrong among the written) per element."""
    never = same_bits(got, poison_value(array.dtype)) if array.init == "poison" else np.zeros(got.shape, bool)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    err = np.where(np.isnan(err), np.inf, err)  # NaN is never within tolerance
    return never, err, (err > tol) & ~never


@dataclass
class _Tally:
    """What the comparison of a case's outputs found, output after output."""

    total: int = 0
    unwritten: int = 0
    wrong: int = 0
    max_abs: float = 0.0
    max_rel: float = 0.0
    mismatches: list = field(default_factory=list)
    first_unwritten: tuple | None = None
    """(output, first indices never written, the diagnosis of why or None)."""
    related: tuple = ("", "", "")
    """(what the wrong values say, hint, mistake), from the first output with wrong values."""

    def stats(self) -> dict:
        return dict(
            wrong=self.wrong,
            unwritten=self.unwritten,
            total=self.total,
            max_abs_error=self.max_abs,
            max_rel_error=self.max_rel,
            mismatches=tuple(self.mismatches),
        )


def judge_case(
    spec: Spec, case: Case, outcome: Outcome, expected: dict, tolerance, inputs: dict | None = None
) -> CaseResult:
    """The verdict on one case. `tolerance` maps output name -> allowed |error|; `inputs`, when
    given, are shown in a wrong result's message."""
    dims = dict(case.dims)
    base = dict(name=case.name, dims=dims, seconds=outcome.seconds)
    if outcome.error is not None:
        return _error_result(outcome.error, base)
    fence = _fence_hit(spec, outcome)
    if fence:
        return CaseResult(verdict="out_of_bounds", message=fence[0], mistake=fence[1], **base)
    tally = _Tally()
    for array in spec.outputs:
        _tally_output(tally, spec, array, outcome, dims, expected, tolerance[array.name], inputs)
    if tally.unwritten:
        return _unwritten_result(tally, base)
    if tally.wrong:
        return _wrong_result(tally, base, inputs)
    return CaseResult(verdict="passed", **base, **tally.stats())


def _error_result(e, base: dict) -> CaseResult:
    """The case's result when the run itself failed (an exception, a race, a bad index)."""
    return CaseResult(
        verdict=e.verdict,
        message=e.message,
        line=e.line,
        source=e.source,
        hint=getattr(e, "hint", ""),
        mistake=getattr(e, "mistake", ""),
        **base,
    )


def _tally_output(tally: _Tally, spec, array, outcome, dims, expected, tol, inputs) -> None:
    """Compare one output with the oracle's and add what it shows to `tally`."""
    shape = array.shape_for(dims)
    got = output_view(outcome.buffers[array.name], shape)
    want = np.asarray(expected[array.name])
    report = getattr(outcome, "report", None)
    tally.total += got.size
    never, err, bad = _compare(array, got, want, tol)
    if never.any() and tally.first_unwritten is None:
        tally.first_unwritten = (
            array.name,
            [_index(i, shape) for i in np.flatnonzero(never)[:SHOWN]],
            diagnose.unwritten(array.name, never, report),
        )
    if bad.any() and not tally.related[0]:
        alike = {a.name: inputs[a.name] for a in spec.inputs if a.shape == array.shape and a.name in (inputs or {})}
        tally.related = collectives.diagnose(got, want, alike, report, tol)
        if tally.related is None:
            text, mistake = diagnose.relation(got, want, bad, report)
            tally.related = (text, "", mistake)
    tally.unwritten += int(never.sum())
    tally.wrong += int(bad.sum())
    finite = np.where(never, 0.0, err)
    tally.max_abs = max(tally.max_abs, float(finite.max(initial=0.0)))
    scale = np.maximum(np.abs(want.astype(np.float64)), np.finfo(np.float64).tiny)
    with np.errstate(over="ignore", invalid="ignore"):
        relative = np.where(never, 0.0, finite / scale)
    tally.max_rel = max(tally.max_rel, float(relative.max(initial=0.0)))
    for flat in np.flatnonzero(bad)[: SHOWN - len(tally.mismatches)]:
        idx = _index(flat, shape)
        tally.mismatches.append(Mismatch(array.name, idx, float(want[idx]), float(got[idx])))


def _unwritten_result(tally: _Tally, base: dict) -> CaseResult:
    name, where, diagnosis = tally.first_unwritten
    if diagnosis:
        message, hint, mistake = diagnosis
        return CaseResult(
            verdict="unwritten_output", message=message, hint=hint, mistake=mistake, **base, **tally.stats()
        )
    shown = "; ".join(f"[{_fmt_index(i)}]" for i in where)
    message = (
        f"{tally.unwritten} of {tally.total} output elements were never written, first in `{name}` at "
        f"{shown}. Does your grid cover every element?"
    )
    return CaseResult(verdict="unwritten_output", message=message, **base, **tally.stats())


def _wrong_result(tally: _Tally, base: dict, inputs) -> CaseResult:
    m = tally.mismatches[0]
    text, hint, mistake = tally.related
    message = (
        f"{tally.wrong} of {tally.total} {'element is' if tally.total == 1 else 'elements are'} wrong; first: `{m.output}[{_fmt_index(m.index)}]` "
        f"should be {m.expected:.7g} but is {m.got:.7g} (max abs error {tally.max_abs:.3g})."
        f"{text}{diagnose.inputs_text(inputs)}"
    )
    return CaseResult(verdict="wrong_result", message=message, hint=hint, mistake=mistake, **base, **tally.stats())


SAMPLED = 1 << 20
"""Elements per output checked in a timed run at the benchmark size. A replayed, cached or
partly computed answer is wrong in far more than 1 element in 10^4, and 2^20 random samples
then miss it with probability below e^-100; judging all 2^28 took seconds."""


def picks(size: int, seed: int) -> np.ndarray:
    """Which elements of an output of `size` a timed run is judged at: every one of a small
    output, else SAMPLED drawn from `seed` (chosen by the grading process)."""
    return np.arange(size) if size <= SAMPLED else np.sort(np.random.default_rng(seed).integers(0, size, SAMPLED))


def taken_at(expected, tolerance, picked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(expected values, tolerance) of one output at the `picked` elements; a scalar tolerance
    stays one."""
    tol = np.asarray(tolerance, dtype=np.float64)
    return np.asarray(expected).reshape(-1)[picked], (tol if tol.ndim == 0 else tol.reshape(-1)[picked])


def sampled_outputs(spec: Spec, dims: dict, buffers: dict, seed: int) -> dict:
    """What a timed run sends back to be judged: each fenced output's canaries, and between
    them its elements at `picks` (4 MiB, not the whole 512 MiB of a large output)."""
    sampled = {}
    for array in spec.outputs:
        buf, size = buffers[array.name], int(np.prod(array.shape_for(dims)))
        sampled[array.name] = np.concatenate([buf[:PAD], buf[PAD : PAD + size][picks(size, seed)], buf[PAD + size :]])
    return sampled


def judge_sampled(
    spec: Spec,
    dims: dict,
    buffers: dict,
    expected: dict,
    tolerance: dict,
    seed: int,
    sampled: bool = False,
    at_picks: bool = False,
) -> str | None:
    """A message when a timed run's output is wrong: the canaries in full, the values at
    `picks` (SAMPLED random elements, all of them for smaller outputs). None when it is right.
    `sampled`: the buffers are `sampled_outputs`'s, made with the same `seed`; `at_picks`:
    `expected` and `tolerance` are given at the picks only (grader/gpu/speed.py `AtPicks`)."""
    sizes = {array.name: int(np.prod(array.shape_for(dims))) for array in spec.outputs}
    chosen = {name: picks(size, seed) for name, size in sizes.items()}
    for name, picked in chosen.items():
        held = buffers[name].size - 2 * PAD
        if sampled and held != picked.size:
            return f"The timed run's `{name}` came back with {held} samples, not {picked.size}."
    fence = _fence_hit(spec, Outcome(buffers, None, 0.0), sizes)
    if fence:
        return fence[0]
    for array in spec.outputs:
        shape = array.shape_for(dims)
        picked = chosen[array.name]
        if sampled:
            got = buffers[array.name][PAD:-PAD]
        else:
            got = output_view(buffers[array.name], shape).reshape(-1)[picked]
        if at_picks:
            want, tol = np.asarray(expected[array.name]), np.asarray(tolerance[array.name], dtype=np.float64)
        else:
            want, tol = taken_at(expected[array.name], tolerance[array.name], picked)
        never, _, wrong = _compare(array, got, want, tol)
        bad = never | wrong
        if bad.any():
            at = int(np.flatnonzero(bad)[0])
            first = int(picked[at])
            idx = _fmt_index(_index(first, shape))
            what = (
                "was never written" if never[at] else (f"should be {float(want[at]):.7g} but is {float(got[at]):.7g}")
            )
            return (
                f"{int(bad.sum())} of {picked.size} checked elements of `{array.name}` are wrong; "
                f"first: `{array.name}[{idx}]` {what}."
            )
    return None

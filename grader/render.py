"""How a CheckResult looks: HTML for notebooks, plain text, and rich text for the terminal.
A result carries a learner's words (messages, source lines, names), so the text and rich views
reach a terminal only through `textsafe.terminal_text`, and the HTML view through `html_text`."""

from __future__ import annotations

import re

from grader.doctor.integration import where_it_ran
from grader.doctor.summary import report_rich
from grader.result import CheckResult
from grader.textsafe import html_text, terminal_segments, terminal_text

_COLOURS = {"passed": "#1a7f37", "too_slow": "#9a6700"}
_FAIL_COLOUR = "#cf222e"


def _dims(dims: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in dims.items())


def _backend_line(r: CheckResult) -> str:
    where = "a GPU" if r.backend == "gpu" else where_it_ran(r.doctor)
    seed = f"seed {r.seed}" if r.seed is not None else "secret seed"
    unsandboxed = "; UNSANDBOXED (graded without bubblewrap)" if r.unsandboxed else ""
    return f"ran on {where}; {seed}; {r.seconds:.1f} s{unsandboxed}"


def _speed_line(r: CheckResult) -> str:
    s = r.speed
    return s.details.summary if s.details else f"Speed: {s.reason}"


def _method_line(r: CheckResult) -> str:
    """How a GPU speed figure was measured (empty when none was)."""
    method = r.speed.details.method if r.speed.details else ""
    return f"How it was measured: {method}" if method else ""


def headline(r: CheckResult) -> str:
    """PASSED, PASSED — but <what costs speed>, or NOT YET (<verdict>)."""
    if not r.passed:
        return f"NOT YET ({r.verdict})"
    return "PASSED — but " + r.warnings[0] if r.warnings else "PASSED"


def result_text(r: CheckResult) -> str:
    head = headline(r)
    lines = [f"{r.exercise} — {r.title}: {head}  score {r.score:g}/{r.max_score:g}", r.message]
    if r.hint:
        lines.append(f"Hint: {r.hint}")
    lines += [f"Warning: {w}" for w in r.warnings[1:]]
    for c in r.cases:
        mark = "ok " if c.passed else "FAIL"
        lines.append(f"  {mark} {c.name:<28} {_dims(c.dims):<24} {c.verdict}")
    if r.doctor is not None:
        lines.append(str(r.doctor))
    lines += [_speed_line(r), _method_line(r), f"({_backend_line(r)})"]
    return terminal_text("\n".join(line for line in lines if line))


_CODE = re.compile(r"`([^`\n]+)`")


def prose_html(text: str) -> str:
    """A message or hint as HTML: escaped, with its `code` in <code> (as a terminal shows it
    plainly and Markdown would set it)."""
    return _CODE.sub(r"<code>\1</code>", html_text(text))


def result_html(r: CheckResult) -> str:
    colour = _COLOURS.get(r.verdict, _FAIL_COLOUR)
    head = (
        "Passed" + (" — but " + r.warnings[0] if r.warnings else "")
        if r.passed
        else f"Not yet — {r.verdict.replace('_', ' ')}"
    )
    if r.passed and r.warnings:
        colour = _COLOURS["too_slow"]
    esc = html_text
    rows = "".join(
        f"<tr><td style='color:{_COLOURS['passed'] if c.passed else _FAIL_COLOUR};font-weight:bold'>"
        f"{'ok' if c.passed else 'FAIL'}</td><td>{esc(c.name)}</td>"
        f"<td><code>{esc(_dims(c.dims))}</code></td><td>{esc(c.verdict)}</td></tr>"
        for c in r.cases
    )
    table = (
        "<table style='border-collapse:collapse;margin:6px 0'><tr><th></th><th>case</th>"
        f"<th>sizes</th><th>verdict</th></tr>{rows}</table>"
        if rows
        else ""
    )
    hint = f"<p><b>Hint:</b> {prose_html(r.hint)}</p>" if r.hint else ""
    hint += "".join(f"<p><b>Warning:</b> {prose_html(w)}</p>" for w in r.warnings[1:])
    return (
        f"<div style='border-left:6px solid {colour};padding:6px 12px;font-family:sans-serif'>"
        f"<div style='font-size:1.1em'><b>{esc(r.exercise)}</b> — {esc(r.title)}: "
        f"<b style='color:{colour}'>{prose_html(head)}</b> &nbsp; score {r.score:g}/{r.max_score:g}</div>"
        f"<p>{prose_html(r.message)}</p>{hint}{table}<p>{esc(_speed_line(r))}</p>"
        + (f"<p style='color:#666;font-size:0.9em'>{esc(_method_line(r))}</p>" if _method_line(r) else "")
        + (r.doctor._repr_html_() if r.doctor is not None else "")
        + f"<p style='color:#666;font-size:0.9em'>{esc(_backend_line(r))}</p></div>"
    )


def result_rich(r: CheckResult):
    """A rich renderable for the terminal."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    ok = r.passed
    style = ("yellow" if r.warnings else "green") if ok else "red"
    title = Text.assemble(
        (f"{r.exercise}", "bold"),
        f" — {r.title}: ",
        (headline(r), f"bold {style}"),
        f"   score {r.score:g}/{r.max_score:g}",
    )
    parts = [title, Text(r.message)]
    if r.hint:
        parts.append(Text.assemble(("Hint: ", "bold yellow"), r.hint))
    parts += [Text.assemble(("Warning: ", "bold yellow"), w) for w in r.warnings[1:]]
    if r.cases:
        table = Table(box=None, pad_edge=False, show_header=True, header_style="dim")
        for col in ("", "case", "sizes", "verdict", "max abs err"):
            table.add_column(col)
        for c in r.cases:
            err = "" if c.max_abs_error is None else f"{c.max_abs_error:.2g}"
            table.add_row(
                Text("ok", style="green") if c.passed else Text("FAIL", style="bold red"),
                c.name,
                _dims(c.dims),
                Text(c.verdict, style="green" if c.passed else "red"),
                err,
            )
        parts.append(table)
    if r.doctor is not None:
        parts.append(report_rich(r.doctor))
    parts.append(Text(_speed_line(r)))
    if _method_line(r):
        parts.append(Text(_method_line(r), style="dim"))
    parts.append(Text(_backend_line(r), style="dim"))
    return TerminalSafe(Panel(Group(*parts), border_style=style, expand=False))


class TerminalSafe:
    """A rich renderable whose text reaches the terminal through `terminal_text`: whatever a
    learner's words hold, no escape sequence or control character is printed."""

    def __init__(self, inner):
        self.inner = inner

    def __rich_console__(self, console, options):
        yield from terminal_segments(console.render(self.inner, options))

    def __rich_measure__(self, console, options):
        from rich.measure import Measurement

        return Measurement.get(console, options, self.inner)

"""The kernel doctor's report: merged over a check's cases, built from the doctor's statistics,
and shown in a terminal, a notebook or `zerogpu doctor`.

The report's types are data of grader/result/doctor.py (a CheckResult carries them to every
reader); they are named here too, where the doctor's callers have always found them.
"""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import replace

from grader.result.doctor import (  # noqa: F401 - the report's types, named where callers look
    DOCTOR,
    SEVERITY_ERROR,
    SIMULATOR,
    DoctorReport,
    KernelReport,
    SiteReport,
)
from grader.doctor.access_patterns import describe, interleaved, slow_memory_findings, strided_run
from grader.doctor.sites import SITES


def merge(reports) -> DoctorReport | None:
    """One report for several runs (the cases of a check): findings de-duplicated by what
    and where, memory statistics added up per site."""
    reports = [r for r in reports if r is not None]
    if not reports:
        return None
    executor = DOCTOR if all(r.ran_on_doctor for r in reports) else SIMULATOR
    reason = next((r.reason for r in reports if r.reason), "")
    found: dict = {}
    for r in reports:
        for f in r.findings:
            key = (f.kind, f.kernel) if f.kind == "slow_memory" else (f.kind, f.filename, f.line, f.other_line, f.array)
            if key in found:
                found[key] = replace(found[key], count=found[key].count + f.count)
            else:
                found[key] = f
    kernels: dict = {}
    for r in reports:
        for k in r.kernels:
            sites = kernels.setdefault(k.kernel, {})
            for s in k.sites:
                key = (s.line, s.text, s.access)
                old = sites.get(key)
                sites[key] = (
                    s
                    if old is None
                    else replace(
                        old,
                        requests=old.requests + s.requests,
                        sectors=old.sectors + s.sectors,
                        ideal=old.ideal + s.ideal,
                        degree_sum=old.degree_sum + s.degree_sum,
                        degree_max=max(old.degree_max, s.degree_max),
                        contention_max=max(old.contention_max, s.contention_max),
                        suggestion=old.suggestion or s.suggestion,
                    )
                )
    merged_kernels = tuple(
        KernelReport(name, tuple(sorted(sites.values(), key=lambda s: s.line))) for name, sites in kernels.items()
    )
    return DoctorReport(
        executor,
        reason,
        _slow_memory_of(found, merged_kernels),
        merged_kernels,
        round(sum(r.seconds for r in reports), 3),
    )


def _slow_memory_of(found: dict, kernels: tuple) -> tuple:
    """The findings, each kernel's one slow_memory warning said anew from its sites over every
    case (one paragraph naming them all, and the fix once), where it stood."""
    anew = {f.kernel: f for f in slow_memory_findings(kernels)}
    out = []
    for (kind, *_), f in found.items():
        if kind == "slow_memory" and f.kernel in anew:
            f = replace(anew[f.kernel], count=f.count)
        out.append(f)
    return tuple(out)


# -- views -------------------------------------------------------------------------------------
def _pct(value) -> str:
    return "—" if value is None else f"{value:.0%}"


def report_text(r: DoctorReport) -> str:
    lines = [f"Kernel doctor: {r.executor_line()}"]
    if r.findings:
        for f in r.findings:
            more = f" (×{f.count})" if f.count > 1 else ""
            lines.append(f"  {f.severity.upper()} {f.kind.replace('_', ' ')}{more}: {f.message}")
            if f.source:
                lines.append(f"      line {f.line}: {f.source}")
    elif r.ran_on_doctor:
        lines.append("  No races, missing atomics, divergent barriers or reads of unwritten shared memory.")
    for k in r.kernels:
        lines.append(f"  Memory, kernel `{k.kernel}`: {k.headline()}")
        for s in k.sites:
            lines.append(
                f"    line {s.line:<4} {s.space:<6} {s.access:<6} `{s.text}`: {s.summary()}"
                + (f" — {s.pattern}" if s.pattern else "")
            )
        for tip in r.tips(k):
            lines.append(f"    Fix: {tip}")
    return "\n".join(lines)


def report_html(r: DoctorReport) -> str:
    esc = html.escape
    parts = [
        f"<div style='font-family:sans-serif;margin:6px 0'><b>Kernel doctor</b> — "
        f"<span style='color:#666'>{esc(r.executor_line())}</span>"
    ]
    if r.findings:
        items = "".join(
            f"<li><b style='color:{'#cf222e' if f.severity == SEVERITY_ERROR else '#9a6700'}'>"
            f"{esc(f.kind.replace('_', ' '))}</b>{esc(f' ×{f.count}' if f.count > 1 else '')}: "
            f"{esc(f.message)}" + (f"<br><code>line {f.line}: {esc(f.source)}</code>" if f.source else "") + "</li>"
            for f in r.findings
        )
        parts.append(f"<ul style='margin:4px 0'>{items}</ul>")
    elif r.ran_on_doctor:
        parts.append(
            "<p style='margin:4px 0'>No races, missing atomics, divergent barriers or "
            "reads of unwritten shared memory.</p>"
        )
    for k in r.kernels:
        rows = "".join(
            f"<tr><td>{s.line}</td><td><code>{esc(s.text)}</code></td><td>{s.space} {s.access}</td>"
            f"<td>{esc(s.summary())}</td><td>{esc(s.pattern)}</td></tr>"
            for s in k.sites
        )
        tips = "".join(f"<li>{esc(t)}</li>" for t in r.tips(k))
        parts.append(
            f"<div><b>Memory, kernel <code>{esc(k.kernel)}</code></b>: {esc(k.headline())}"
            "<table style='border-collapse:collapse;font-size:0.9em'><tr><th>line</th><th>access</th>"
            f"<th>where</th><th>per warp access</th><th>pattern</th></tr>{rows}</table>"
            + (f"<ul style='margin:4px 0'>{tips}</ul>" if tips else "")
            + "</div>"
        )
    parts.append("</div>")
    return "".join(parts)


def report_rich(r: DoctorReport):
    """A rich renderable for `zerogpu doctor`."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    parts = [Text.assemble(("Kernel doctor", "bold"), " — ", (r.executor_line(), "dim"))]
    if r.findings:
        for f in r.findings:
            style = "bold red" if f.severity == SEVERITY_ERROR else "bold yellow"
            more = f" ×{f.count}" if f.count > 1 else ""
            parts.append(Text.assemble((f"{f.kind.replace('_', ' ')}{more}: ", style), f.message))
            if f.source:
                parts.append(Text(f"    line {f.line}: {f.source}", style="cyan"))
    elif r.ran_on_doctor:
        parts.append(
            Text("No races, missing atomics, divergent barriers or reads of unwritten shared memory.", style="green")
        )
    for k in r.kernels:
        parts.append(Text.assemble(("Memory, kernel ", "bold"), (k.kernel, "bold cyan"), f": {k.headline()}"))
        table = Table(box=None, pad_edge=False, show_header=True, header_style="dim")
        for col in ("line", "access", "where", "per warp access", "pattern"):
            table.add_column(col)
        for s in k.sites:
            table.add_row(str(s.line), Text(s.text), f"{s.space} {s.access}", s.summary(), s.pattern)
        parts.append(table)
        for tip in r.tips(k):
            parts.append(Text.assemble(("Fix: ", "bold yellow"), tip))
    return Group(*parts)


def kernel_reports(efficiency) -> tuple:
    """KernelReports from the doctor's efficiency statistics of one run."""
    if efficiency is None:
        return ()
    fields = Counter(
        (efficiency.kernel_of[i], s.array) for i, s in efficiency.sites.items() if s.requests and interleaved(s)
    )
    strides = {i: strided_run(s) for i, s in efficiency.sites.items() if s.requests}
    runs = Counter(
        (efficiency.kernel_of[i], efficiency.sites[i].array, stride) for i, stride in strides.items() if stride
    )
    by_kernel: dict = {name: [] for name in efficiency.kernels}
    for index, stats in efficiency.sites.items():
        if not stats.requests:
            continue
        site, kernel = SITES[index], efficiency.kernel_of[index]
        ideal = stats.ideal
        stride = strides[index]
        if interleaved(stats):
            siblings = fields[(kernel, stats.array)]
            if siblings >= stats.shape[-1]:
                ideal = stats.ideal_records
        elif stride:
            siblings = runs[(kernel, stats.array, stride)]
            if siblings >= stride:  # each fetched sector is shared by `stride` of the sites
                ideal = max(stats.ideal, stats.sectors // stride)
        else:
            siblings = 0
        pattern, suggestion = describe(stats, siblings)
        by_kernel.setdefault(kernel, []).append(
            SiteReport(
                kernel,
                site.line,
                site.text,
                stats.space,
                site.kind,
                stats.array,
                stats.requests,
                stats.sectors,
                ideal,
                stats.degree_sum,
                stats.degree_max,
                stats.contention_max,
                pattern,
                suggestion,
            )
        )
    return tuple(
        KernelReport(name, tuple(sorted(sites, key=lambda s: s.line))) for name, sites in by_kernel.items() if sites
    )

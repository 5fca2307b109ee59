"""The kernel doctor's report: findings and memory efficiency, per kernel, as data.

Like CheckResult it is a frozen dataclass with `to_dict()`/`from_dict()` (it travels from
the grading child as JSON), `_repr_html_()` for notebooks and `__str__` for terminals.
Reports of several cases merge into one (`merge`).
"""

from __future__ import annotations

import html
from dataclasses import asdict, dataclass, replace

from grader.doctor.findings import SEVERITY_ERROR, Finding, mistake_of

DOCTOR, SIMULATOR = "kernel doctor", "simulator"


@dataclass(frozen=True)
class SiteReport:
    """One global or shared access site of a kernel, over the profiled warp accesses."""

    kernel: str
    line: int
    text: str
    space: str
    """"global" or "shared"."""
    access: str
    """"load", "store", "update" (`a[i] += v`) or "atomic"."""
    array: str
    requests: int
    """Warp accesses profiled."""
    sectors: int = 0
    """Global: 32-byte sectors touched, summed over the requests."""
    ideal: int = 0
    """Global: the fewest sectors that could hold the same elements, summed."""
    degree_sum: int = 0
    """Shared: bank-conflict degree (1 = none), summed over the requests."""
    degree_max: int = 0
    contention_max: int = 0
    """Atomics: most lanes of one warp on one element."""
    pattern: str = ""
    suggestion: str = ""
    """A fix kind (grader.doctor.efficiency.FIXES), or "" when the access is fine."""

    @property
    def efficiency(self) -> float | None:
        return self.ideal / self.sectors if self.space == "global" and self.sectors else None

    @property
    def degree(self) -> float | None:
        return self.degree_sum / self.requests if self.space == "shared" and self.requests else None

    def summary(self) -> str:
        if self.space == "global":
            per = self.sectors / self.requests
            ideal = self.ideal / self.requests
            text = f"{per:.1f} sectors per warp access (fewest possible {ideal:.1f}): {self.efficiency:.0%} efficient"
        else:
            text = (
                f"bank conflicts: {self.degree:.1f}-way on average, {self.degree_max}-way at worst"
                if self.degree_max > 1
                else "no bank conflicts"
            )
        if self.contention_max > 1:
            text += f"; up to {self.contention_max} lanes of a warp update one element atomically (they queue)"
        return text


@dataclass(frozen=True)
class KernelReport:
    kernel: str
    sites: tuple = ()

    def _efficiency(self, accesses) -> float | None:
        chosen = [s for s in self.sites if s.space == "global" and s.access in accesses]
        sectors = sum(s.sectors for s in chosen)
        return sum(s.ideal for s in chosen) / sectors if sectors else None

    @property
    def load_efficiency(self) -> float | None:
        return self._efficiency(("load", "update"))

    @property
    def store_efficiency(self) -> float | None:
        return self._efficiency(("store", "update", "atomic"))

    @property
    def shared_degree(self) -> float | None:
        chosen = [s for s in self.sites if s.space == "shared"]
        requests = sum(s.requests for s in chosen)
        return sum(s.degree_sum for s in chosen) / requests if requests else None

    @property
    def suggestions(self) -> tuple:
        """One fix per kind of problem, naming the sites that have it."""
        from grader.doctor.efficiency import FIXES

        out = []
        for kind in dict.fromkeys(s.suggestion for s in self.sites if s.suggestion):
            what, advice = FIXES[kind]
            where = ", ".join(f"`{s.text}` (line {s.line})" for s in self.sites if s.suggestion == kind)
            out.append(f"{what} — {where}. {advice}")
        return tuple(out)

    def headline(self) -> str:
        parts = []
        for label, value in (("global loads", self.load_efficiency), ("global stores", self.store_efficiency)):
            if value is not None:
                parts.append(f"{label} {value:.0%} coalesced")
        if self.shared_degree is not None:
            parts.append(
                f"shared memory {self.shared_degree:.1f}-way bank conflicts"
                if self.shared_degree > 1.05
                else "shared memory free of bank conflicts"
            )
        return "; ".join(parts) or "no global or shared memory accesses profiled"


@dataclass(frozen=True)
class DoctorReport:
    """What the doctor ran and found. `executor` says which back end ran the kernels."""

    executor: str
    reason: str = ""
    """Why the simulator ran instead (the feature the doctor lacks), when it did."""
    findings: tuple = ()
    kernels: tuple = ()
    seconds: float = 0.0
    launches: tuple = ()
    """(grid, block) of each launch of one run, as 3-tuples; empty in a merged report."""
    shuffles: tuple = ()
    """(kernel or device function, op, line, text, offsets) per shuffle site: the offsets
    (or source lanes) lane 0 of a block's first warp passed, in order (grader.steps.diagnose:
    a reduction with shfl_up_sync, a scan with shfl_down_sync); empty in a merged report."""

    @property
    def errors(self) -> tuple:
        return tuple(f for f in self.findings if f.severity == SEVERITY_ERROR)

    @property
    def ran_on_doctor(self) -> bool:
        return self.executor == DOCTOR

    def executor_line(self) -> str:
        if self.ran_on_doctor:
            return "Ran on the kernel doctor (Zero to GPU's CPU executor)."
        return f"Ran on Numba's CUDA simulator: the kernel doctor cannot run this code ({self.reason})."

    def to_dict(self) -> dict:
        data = asdict(self)
        for f, finding in zip(data["findings"], self.findings):
            f["mistake"] = mistake_of(finding)
        for k, kernel in zip(data["kernels"], self.kernels):
            k["headline"] = kernel.headline()
            for site, s in zip(k["sites"], kernel.sites):
                site["efficiency"], site["degree"] = s.efficiency, s.degree
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "DoctorReport":
        def tup(values):
            return tuple(values) if values is not None else None

        findings = tuple(
            Finding(**{**f, **{k: tup(f.get(k)) for k in ("thread", "block", "other_thread", "other_block", "index")}})
            for f in data.get("findings", ())
        )
        kernels = tuple(
            KernelReport(
                k["kernel"],
                tuple(SiteReport(**{key: s[key] for key in SiteReport.__dataclass_fields__}) for s in k["sites"]),
            )
            for k in data.get("kernels", ())
        )
        launches = tuple((tuple(g), tuple(b)) for g, b in data.get("launches", ()))
        shuffles = tuple((k, op, line, text, tuple(args)) for k, op, line, text, args in data.get("shuffles", ()))
        return cls(
            data["executor"], data.get("reason", ""), findings, kernels, data.get("seconds", 0.0), launches, shuffles
        )

    def __str__(self) -> str:
        return report_text(self)

    def _repr_html_(self) -> str:
        return report_html(self)


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
            key = (f.kind, f.filename, f.line, f.other_line, f.array)
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
        executor, reason, tuple(found.values()), merged_kernels, round(sum(r.seconds for r in reports), 3)
    )


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
        for tip in k.suggestions:
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
        tips = "".join(f"<li>{esc(t)}</li>" for t in k.suggestions)
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
        for tip in k.suggestions:
            parts.append(Text.assemble(("Fix: ", "bold yellow"), tip))
    return Group(*parts)


def kernel_reports(efficiency) -> tuple:
    """KernelReports from the doctor's efficiency statistics of one run."""
    from collections import Counter

    from grader.doctor.efficiency import describe, interleaved, strided_run
    from grader.doctor.sites import SITES

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

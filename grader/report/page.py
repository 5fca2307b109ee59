"""The class report as one self-contained HTML page: inline CSS, charts as PNG data: URIs,
no script and no external URL, so it opens from a mail attachment or a file share.

Every string from the gradebook goes through `textsafe.html_text` (control and bidirectional
characters neutralised, then escaped); the page is laid out top-down in the order an
instructor reads it: the summary, what needs a look (hand-ins that could not be graded, files
no exercise reads, edited autograder cells, out-of-date feedback), then exercises, mistakes,
speed, scores and students. Each cell of the students' grid opens (an HTML `<details>`, no
script) on that hand-in's message, line and cases passed. Text and CSS only: no glyph that
needs an emoji font.
"""

from __future__ import annotations

import base64
import time

from grader.classroom.gradebook import NOT_SUBMITTED
from grader.report.data import ALL_OR_NOTHING, NO_GPU, NOT_ATTEMPTED, VERDICT_ORDER, ClassReport, tier_names
from grader.report.plots import VERDICT_COLOURS, label
from grader.result import MISTAKES
from grader.render import prose_html
from grader.textsafe import html_text as escape

CODES = {
    "passed": "ok",
    "too_slow": "sl",
    "syntax_error": "sx",
    "exception": "ex",
    "wrong_result": "wr",
    "out_of_bounds": "ob",
    "unwritten_output": "uw",
    "timeout": "to",
    "race": "rc",
    "forbidden": "fb",
    "crashed": "cr",
    "not_attempted": "na",
    NOT_SUBMITTED: "–",
}
"""Two-letter cell codes of the student grid (the colour says the same)."""
MAX_NAMES = 40
"""Names listed inline before "and N more"."""
MAX_LISTED = 60
"""Rows of a "needs a look" table before "and N more"."""
MAX_MESSAGE = 700
"""Characters of a result's message shown when a grid cell opens (submissions.csv has all)."""

CSS = """
:root{--ink:#1f2328;--muted:#656d76;--line:#d0d7de;--soft:#f6f8fa;--faint:#eaeef2}
*{box-sizing:border-box}
body{margin:0;background:#fff;color:var(--ink);font:15px/1.55 -apple-system,BlinkMacSystemFont,
"Segoe UI","Helvetica Neue",Helvetica,Arial,sans-serif;-webkit-font-smoothing:antialiased}
main{max-width:1040px;margin:0 auto;padding:40px 32px 64px}
.eyebrow{margin:0;font-size:12px;letter-spacing:.08em;text-transform:uppercase;color:var(--muted)}
h1{font-size:30px;line-height:1.2;margin:4px 0 6px;font-weight:650}
h2{font-size:20px;margin:44px 0 2px;padding-bottom:6px;border-bottom:1px solid var(--line);font-weight:620}
.meta{margin:0;color:var(--muted);font-size:13.5px}
.lede{margin:6px 0 14px;color:var(--muted);font-size:14px;max-width:52em}
.cards{display:grid;grid-template-columns:repeat(4,1fr);gap:12px;margin:26px 0 18px}
.card{border:1px solid var(--line);border-radius:10px;padding:14px 16px}
.card .k{font-size:11.5px;letter-spacing:.07em;text-transform:uppercase;color:var(--muted)}
.card .v{font-size:28px;font-weight:650;line-height:1.25;font-variant-numeric:tabular-nums;
white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.card .v.id{font-size:21px;line-height:1.6;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.card .n{font-size:13px;color:var(--muted)}
.findings{background:var(--soft);border-radius:10px;padding:10px 22px;margin:0}
.findings li{margin:6px 0}
.notice{border-left:4px solid #d4a72c;background:#fff8c5;padding:10px 14px;border-radius:6px;margin:10px 0}
table{border-collapse:collapse;width:100%;font-size:14px;font-variant-numeric:tabular-nums}
th{text-align:left;font-size:11.5px;letter-spacing:.05em;text-transform:uppercase;color:var(--muted);
font-weight:600;border-bottom:2px solid var(--line);padding:6px 8px;vertical-align:bottom}
td{border-bottom:1px solid var(--faint);padding:6px 8px;vertical-align:middle}
tbody tr:hover{background:var(--soft)}
.num{text-align:right}
.dim{color:var(--muted)}
code,.id{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
.bar{display:inline-block;width:84px;height:8px;border-radius:4px;background:var(--faint);
overflow:hidden;vertical-align:middle;margin-right:8px}
.bar span{display:block;height:100%;background:#1a7f37}
.chip{display:inline-block;padding:0 8px;border-radius:10px;font-size:12.5px;line-height:20px;color:#fff}
.chip.light{color:var(--ink)}
.cell{display:inline-block;width:22px;height:20px;border-radius:4px;text-align:center;
font:600 11px/20px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;color:#fff}
.cell.light{color:var(--muted)}
.cell.re{position:relative}
.cell.re::after,.re-dot{content:"";display:inline-block;width:7px;height:7px;border-radius:50%;
background:#8250df;border:1px solid #fff}
.cell.re::after{position:absolute;top:-3px;right:-3px}
.grid th.ex,.grid td.ex{padding:4px 1px;text-align:center;width:26px}
.grid td.ex{position:relative}
.grid details summary{list-style:none;cursor:pointer}
.grid details summary::-webkit-details-marker{display:none}
.grid details[open] summary .cell{outline:2px solid var(--ink);outline-offset:1px}
.pop{position:absolute;z-index:5;top:28px;right:-8px;width:430px;text-align:left;background:#fff;
border:1px solid var(--line);border-radius:8px;box-shadow:0 8px 24px rgba(31,35,40,.18);
padding:10px 12px;font-size:13px;line-height:1.45;white-space:normal}
.pop .head{font-weight:600;margin-bottom:4px}
.pop .msg{margin:6px 0;white-space:pre-wrap;overflow-wrap:anywhere}
.pop pre{margin:4px 0;padding:4px 6px;background:var(--soft);border-radius:4px;white-space:pre-wrap;
overflow-wrap:anywhere;font-size:12px}
.pop .warn{color:#9a6700}
.tag{display:inline-block;padding:0 7px;border-radius:10px;font-size:12.5px;line-height:20px;
border:1px solid var(--line);background:var(--soft)}
table.look td{vertical-align:top}
.legend{display:flex;flex-wrap:wrap;gap:6px 14px;font-size:12.5px;color:var(--muted);margin:8px 0 12px}
img.chart{display:block;width:100%;height:auto;margin:10px 0 4px}
.names{columns:4;column-gap:24px;font-size:14px;margin:6px 0}
footer{margin-top:52px;padding-top:12px;border-top:1px solid var(--line);font-size:13px;color:var(--muted)}
footer p{margin:4px 0}
@media (max-width:760px){.cards{grid-template-columns:repeat(2,1fr)}.names{columns:2}}
@media print{main{padding:0}h2{break-after:avoid}img.chart,tr{break-inside:avoid}.pop{display:none}}
"""


def page(report: ClassReport, images: dict, *, title: str | None = None, generated: float | None = None) -> str:
    body = "\n".join(
        [
            _header(report, title, generated),
            _cards(report),
            _findings(report),
            _attention(report),
            _exercises(report),
            _mistakes(report, images["verdicts"]),
            _speed(report, images["speed"]),
            _scores(report, images["scores"]),
            _students(report),
            _footer(report),
        ]
    )
    heading = escape(title or "Class report")
    return (
        f"<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
        f"<title>{heading} — Zero to GPU</title><style>{CSS}</style></head>"
        f"<body><main>\n{body}\n</main></body></html>\n"
    )


# ---- pieces -----------------------------------------------------------------------------


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img class="chart" alt="{escape(alt)}" src="data:image/png;base64,{data}">'


def _date(seconds: float, with_time: bool = False) -> str:
    return time.strftime("%-d %b %Y" + (", %H:%M" if with_time else ""), time.localtime(seconds))


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _chip(verdict: str, text: str | None = None) -> str:
    light = " light" if verdict == NOT_SUBMITTED else ""
    return (
        f'<span class="chip{light}" style="background:{VERDICT_COLOURS[verdict]}">'
        f"{escape(text or label(verdict))}</span>"
    )


def _mistake(name: str, count: int | None = None) -> str:
    """A mistake's label as a neutral tag, its meaning as the tooltip."""
    text = mistake_text(name) + (f" · {count:,}" if count is not None else "")
    tip = MISTAKES[name][1] if name in MISTAKES else ""
    return f'<span class="tag" title="{escape(tip)}">{escape(text)}</span>'


def mistake_text(name: str) -> str:
    return MISTAKES[name][0] if name in MISTAKES else label(name)


def _cell(verdict: str, exercise_id: str | None = None, regraded: str = "") -> str:
    light = " light" if verdict == NOT_SUBMITTED else ""
    tip = f"{exercise_id}: {label(verdict)}" if exercise_id else label(verdict)
    if regraded:
        light, tip = light + " re", tip + " (regraded)"
    return (
        f'<span class="cell{light}" style="background:{VERDICT_COLOURS[verdict]}" '
        f'title="{escape(tip)}">{CODES[verdict]}</span>'
    )


def _names(names: list[str]) -> str:
    shown = ", ".join(f"<span class=\"id\">{escape(n)}</span>" for n in names[:MAX_NAMES])
    more = len(names) - MAX_NAMES
    return shown + (f" and {more} more (see <code>students.csv</code>)" if more > 0 else "")


def _where_graded(report: ClassReport) -> str:
    parts = []
    if report.backends.get("gpu"):
        on = ", ".join(report.devices) or "a GPU"
        parts.append(f"{report.backends['gpu']:,} on {escape(on)}")
    if report.backends.get("doctor"):
        parts.append(f"{report.backends['doctor']:,} on the kernel doctor (no GPU)")
    if report.backends.get("simulator"):
        parts.append(f"{report.backends['simulator']:,} on Numba's CUDA simulator (no GPU)")
    other = sum(n for b, n in report.backends.items() if b not in ("gpu", "doctor", "simulator"))
    if other:
        parts.append(f"{other:,} elsewhere")
    return "Submissions graded: " + "; ".join(parts) + "." if parts else "No submissions graded yet."


def _header(report: ClassReport, title, generated) -> str:
    span = ""
    if report.graded_between:
        first, last = (_date(t) for t in report.graded_between)
        span = f" Graded {first}" + (f" – {last}" if last != first else "") + "."
    made = f" Report made {_date(generated, True)}." if generated else ""
    return (
        f'<header><p class="eyebrow">Zero to GPU · class report</p>'
        f"<h1>{escape(title or 'Class report')}</h1>"
        f'<p class="meta">{len(report.exercises)} exercises · {len(report.students):,} students · '
        f"gradebook <code>{escape(report.source)}</code>.{span}{made}</p>"
        f'<p class="meta">{_where_graded(report)}</p></header>'
    )


def _card(key: str, value: str, note: str, value_class: str = "") -> str:
    return (
        f'<div class="card"><div class="k">{key}</div><div class="v {value_class}">{value}</div>'
        f'<div class="n">{note}</div></div>'
    )


def _cards(report: ClassReport) -> str:
    silent = len(report.silent)
    median = report.median_percent
    hardest = report.hardest
    cards = [
        _card(
            "Class size",
            f"{len(report.students):,}",
            f"{silent:,} attempted nothing" if silent else "everyone attempted something",
        ),
        _card(
            "Submissions",
            f"{report.submissions:,}",
            f"of {report.possible:,} possible ({report.submissions / report.possible:.0%})" if report.possible else "",
        ),
        _card(
            "Median score",
            "–" if median is None else f"{median:.0f}%",
            f"of the {len(report.active):,} students who submitted",
        ),
        _card(
            "Hardest exercise",
            escape(hardest.id) if hardest else "–",
            f"{hardest.passed:,} of {hardest.submitted:,} submissions pass ({_pct(hardest.pass_rate)})"
            if hardest
            else "nothing submitted",
            "id",
        ),
    ]
    return f'<section class="cards">{"".join(cards)}</section>'


def _findings(report: ClassReport) -> str:
    items = []
    hardest = report.hardest
    if hardest and hardest.common_mistake:
        name, count = hardest.common_mistake
        items.append(
            f"<b>Hardest:</b> <code>{escape(hardest.id)}</code> — {hardest.passed:,} of "
            f"{hardest.submitted:,} pass; its most common mistake is {_mistake(name)} "
            f"({count:,})."
        )
    if report.mistakes:
        name, count = min(report.mistakes.items(), key=lambda item: (-item[1], item[0]))
        worst = max(report.exercises, key=lambda e: e.mistakes.get(name, 0))
        items.append(
            f"<b>Most common mistake:</b> {_mistake(name)} in {count:,} failing submissions, most "
            f"in <code>{escape(worst.id)}</code> ({worst.mistakes[name]:,})."
        )
    if report.slow:
        slow = ", ".join(f"{_mistake(n)} ({c:,})" for n, c in report.slow.most_common())
        items.append(f"<b>Correct, but costly on a GPU:</b> {slow}.")
    if report.stuck:
        top = ", ".join(f"<code>{escape(e)}</code> ({n:,})" for e, n in report.stuck.most_common(3))
        items.append(f"<b>Where students are stuck</b> (first exercise not passed, tried and failed): {top}.")
    if report.not_attempted:
        top = ", ".join(f"<code>{escape(e)}</code> ({n:,})" for e, n in report.not_attempted.most_common(3))
        items.append(f"<b>Handed in the starter unchanged</b> (not attempted, not counted as wrong): {top}.")
    done = sum(1 for s in report.active if s.stuck_on is None)
    if done:
        items.append(f"<b>{done:,} student{'s' if done != 1 else ''}</b> passed every exercise.")
    if report.silent:
        items.append(
            f"<b>Attempted nothing ({len(report.silent):,}):</b> {_names([s.name for s in report.silent])} "
            "(handed in nothing, untouched starters, or files no exercise reads)."
        )
    if report.unsandboxed:
        shown = _names([f"{student}/{exercise}" for student, exercise in report.unsandboxed])
        items.append(
            f"<b>Graded without the sandbox ({len(report.unsandboxed):,}, <code>--unsandboxed</code>):</b> "
            f"{shown}. Their code ran outside bubblewrap: weaker evidence (docs/SECURITY.md)."
        )
    if report.partial_credit == ALL_OR_NOTHING:
        items.append(
            "<b>Scoring:</b> all or nothing (the course's <code>partial_credit</code>): an exercise "
            "earns its points only when every case passes."
        )
    items.append(f"<b>Speed:</b> {_speed_sentence(report)}")
    return '<ul class="findings">' + "".join(f"<li>{i}</li>" for i in items) + "</ul>"


def _attention(report: ClassReport) -> str:
    """Hand-ins that could not be graded, files no exercise reads, edited autograder cells and
    out-of-date feedback, each with the reason: nothing is dropped silently."""
    parts = []

    def table(head: str, rows: list) -> str:
        shown = rows[:MAX_LISTED]
        more = len(rows) - len(shown)
        body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in shown)
        tail = f'<p class="lede">and {more:,} more (see <code>submissions.csv</code>).</p>' if more > 0 else ""
        return f'<table class="look"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{tail}'

    looks = (
        (
            "Could not be graded",
            report.not_graded,
            "Counted as not submitted (0 points) until the hand-in is fixed and graded again.",
            "exercise",
            "why",
        ),
        ("Files not graded", report.files, "Handed in, but no exercise reads them.", "file", "why"),
        (
            "Autograder cells edited or deleted",
            report.edited_cells,
            "These cells never ran the grading (<code>zerogpu grade</code> reads only the exercise "
            "cell) and <code>nbgrader autograde</code> puts them back, so the points stand; the "
            "hand-in still changed cells it was told not to touch.",
            "exercise",
            "cells",
        ),
        (
            "Feedback out of date",
            report.stale_feedback,
            "nbgrader feedback that shows results graded again since; its pages say so too.",
            "assignment",
            "what to do",
        ),
    )
    for title, found, lede, what, why in looks:  # each found: (student, what, why) rows
        if found:
            parts.append(
                f'<h3>{title} ({len(found):,})</h3><p class="lede">{lede}</p>'
                + table(
                    f"<th>student</th><th>{what}</th><th>{why}</th>",
                    [
                        (f'<span class="id">{escape(s)}</span>', f"<code>{escape(w)}</code>", escape(t))
                        for s, w, t in found
                    ],
                )
            )
    if not parts:
        return ""
    return "<h2>Needs a look</h2>" + "".join(parts)


def _speed_sentence(report: ClassReport) -> str:
    if not report.speed_graded:
        return escape(NO_GPU)
    timed = sum(len(e.speedups) for e in report.exercises)
    meeting = sum(e.meeting_requirement for e in report.exercises)
    if len(report.devices) > 1:  # a cluster of mixed GPUs: say which timed how many
        counts = ", ".join(f"{n:,} on {escape(d)}" for d, n in sorted(report.timed_per_device.items()))
        on = (
            f"by more than one GPU model ({counts}; each against its own GPU's baseline and "
            "target; students.csv names the GPU of each result)"
        )
    else:
        on = f"on {escape(', '.join(report.devices) or 'a GPU')}"
    return f"{timed:,} submissions timed {on}; {meeting:,} reach their exercise's required speedup."


def _exercises(report: ClassReport) -> str:
    speed = report.speed_graded
    head = (
        "<tr><th class=num>stage</th><th>exercise</th><th class=num>submitted</th>"
        "<th class=num>passed</th><th>pass rate</th><th class=num>mean score</th>"
        "<th>most common mistake</th>" + ("<th class=num>median speedup</th>" if speed else "") + "</tr>"
    )
    rows = []
    for e in report.exercises:
        rate = e.pass_rate
        bar = (
            f'<span class="bar"><span style="width:{100 * rate:.1f}%"></span></span>{_pct(rate)}'
            if rate is not None
            else '<span class="dim">nothing submitted</span>'
        )
        failure = _mistake(*e.common_mistake) if e.common_mistake else '<span class="dim">–</span>'
        mean = f"{sum(e.scores) / len(e.scores):.1f} / {e.max_score:g}" if e.scores else "–"
        cells = [
            f'<td class="num dim">{"" if e.stage is None else e.stage}</td>',
            f'<td class="id">{escape(e.id)}</td>',
            f'<td class="num">{e.submitted:,}</td>',
            f'<td class="num">{e.passed:,}</td>',
            f"<td>{bar}</td>",
            f'<td class="num">{mean}</td>',
            f"<td>{failure}</td>",
        ]
        if speed:
            cells.append(f'<td class="num">{_speedup_cell(e)}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (
        "<h2>Exercises</h2><p class=\"lede\">Pass rate is passed ÷ submitted and the mean score "
        "is over submissions: students who handed nothing in for an exercise are not counted "
        "against it (they appear under Students).</p>"
        f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _speedup_cell(e) -> str:
    if not e.speedups:
        return '<span class="dim">not timed</span>'
    need = f' <span class="dim">(needs {e.required_speedup:g}×)</span>' if e.required_speedup else ""
    return f"{e.median_speedup:.2f}×{need}"


def _mistake_rows(report: ClassReport, counts, per_exercise) -> str:
    rows = []
    for name, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        where = sorted(((per_exercise(e).get(name, 0), e.id) for e in report.exercises), reverse=True)
        spots = ", ".join(f"<code>{escape(i)}</code> ({n:,})" for n, i in where[:3] if n)
        meaning = (
            MISTAKES[name][1] if name in MISTAKES else "no diagnosis names the cause: the verdict says what failed"
        )
        rows.append(
            f'<tr><td>{_mistake(name)}</td><td class="num">{count:,}</td><td>{spots}</td>'
            f'<td class="dim">{escape(meaning)}</td></tr>'
        )
    head = "<tr><th>mistake</th><th class=num>submissions</th><th>most in</th><th>what it is</th></tr>"
    return f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"


def _mistakes(report: ClassReport, png: bytes) -> str:
    table = (
        _mistake_rows(report, report.mistakes, lambda e: e.mistakes)
        if report.mistakes
        else '<p class="lede">No failing submissions.</p>'
    )
    slow = ""
    if report.slow:
        slow = (
            '<h3>Correct, but costly on a GPU</h3><p class="lede">Passing submissions the kernel '
            "doctor warned about: repeated stores to one element, uncoalesced accesses, bank "
            "conflicts (they still earn their points).</p>" + _mistake_rows(report, report.slow, lambda e: e.slow)
        )
    return (
        "<h2>Which mistakes are common</h2><p class=\"lede\">The chart shows every student's "
        "verdict on each exercise. The table counts failing submissions by the mistake their "
        "result names: the kernel doctor's finding (a missing barrier and a missing atomic are "
        "both a <i>race</i> verdict) or the pattern in the output (an unwritten tail, a missing "
        "bounds guard); a result that names none is counted by its verdict.</p>"
        + _img(png, "Stacked bars: verdicts per exercise")
        + table
        + slow
    )


def _speed(report: ClassReport, png: bytes | None) -> str:
    if png is None:
        return (
            f'<h2>Speed</h2><p class="notice"><b>{escape(NO_GPU)}</b> Correctness was graded '
            "on the CPU (the kernel doctor, or Numba's CUDA simulator where the doctor cannot run "
            "a kernel), which says nothing about GPU speed, so this report shows no speed "
            "figures. Grade on a machine with an NVIDIA GPU to see speedups and tiers.</p>"
        )
    tiers = tier_names(report)
    head = (
        "<tr><th>exercise</th><th class=num>timed</th><th class=num>median speedup</th>"
        "<th class=num>required</th><th class=num>meeting it</th>"
        + "".join(f"<th class=num>{escape(t)}</th>" for t in tiers)
        + "</tr>"
    )
    rows = []
    for e in report.exercises:
        if not e.speedups:
            continue
        need = f"{e.required_speedup:g}×" if e.required_speedup else "–"
        rows.append(
            f'<tr><td class="id">{escape(e.id)}</td><td class="num">{len(e.speedups):,}</td>'
            f'<td class="num">{e.median_speedup:.2f}×</td><td class="num">{need}</td>'
            f'<td class="num">{e.meeting_requirement:,}</td>'
            + "".join(f'<td class="num">{e.tiers.get(t, 0):,}</td>' for t in tiers)
            + "</tr>"
        )
    rejected = sum(e.rejected_timings for e in report.exercises)
    note = (
        f'<p class="lede">{rejected:,} timing(s) were rejected (faster than physically '
        "possible, or work outside the timed region) and are left out.</p>"
        if rejected
        else ""
    )
    untimed = [e.id for e in report.exercises if e.passed and not e.speedups]
    if untimed:
        note += (
            '<p class="lede">Not timed on a GPU (graded on the simulator only): '
            + ", ".join(f"<code>{escape(i)}</code>" for i in untimed)
            + ".</p>"
        )
    return (
        "<h2>Speed</h2><p class=\"lede\">Speedup over the bundled baseline kernel for every "
        "submission timed on a GPU (correct ones, including <i>too slow</i>). Box: middle "
        "half; whiskers: 5th–95th percentile; red tick: the speedup the exercise requires. "
        "Tiers count passing submissions by the fraction of the target kernel's speed they "
        "reached.</p>"
        + _img(png, "Speedup distribution per exercise")
        + note
        + f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _scores(report: ClassReport, png: bytes) -> str:
    total = report.students[0].max_score if report.students else 0
    return (
        "<h2>Scores</h2><p class=\"lede\">Each student's points over all "
        f"{len(report.exercises)} exercises ({total:g} available), as a percentage; students "
        "who attempted nothing are left out of the chart.</p>" + _img(png, "Score histogram")
    )


def _students(report: ClassReport) -> str:
    ids = [e.id for e in report.exercises]
    head = (
        "<tr><th>student</th><th class=num>score</th><th class=num>passed</th>"
        "<th>stuck on</th><th>there</th>"
        + "".join(
            f'<th class="ex" title="{escape(e.id)}">{e.stage if e.stage is not None else "·"}</th>'
            for e in report.exercises
        )
        + "</tr>"
    )
    rows = []
    for s in report.students:
        stuck = f'<span class="id">{escape(s.stuck_on)}</span>' if s.stuck_on else '<span class="dim">all passed</span>'
        there = _chip(s.verdicts[s.stuck_on]) if s.stuck_on else ""
        # the grid is the table's last columns: every popover opens leftwards, inside the page
        grid = "".join(f'<td class="ex">{_opening(s.marks[e], e)}</td>' for e in ids)
        rows.append(
            f'<tr><td class="id">{escape(s.name)}</td>'
            f'<td class="num">{s.percent:.0f}%</td>'
            f'<td class="num">{s.passed}/{len(ids)}</td><td>{stuck}</td><td>{there}</td>'
            f"{grid}</tr>"
        )
    legend = "".join(
        f"<span>{_cell(v)} {escape(label(v))}</span>"
        for v in VERDICT_ORDER
        if any(v in s.verdicts.values() for s in report.students)
    )
    if any(m.regraded for s in report.students for m in s.marks.values()):
        legend += '<span><span class="re-dot"></span> regraded: graded again since the class run</span>'
    key = " · ".join(f"{e.stage} <code>{escape(e.id)}</code>" for e in report.exercises if e.stage is not None)
    silent = (
        f'<p class="notice"><b>Attempted nothing ({len(report.silent):,}):</b> '
        f"{_names([s.name for s in report.silent])}</p>"
        if report.silent
        else ""
    )
    return (
        "<h2>Students</h2><p class=\"lede\"><i>Stuck on</i> is the first exercise, in ladder "
        "order, that the student has not passed; <i>there</i> is their verdict on it. The "
        f"grid shows every exercise by stage: {key}. Click a cell for that hand-in's message, "
        "line and cases passed (all of them are in <code>submissions.csv</code>).</p>"
        + silent
        + f'<div class="legend">{legend}</div>'
        + f'<table class="grid"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'
    )


def _opening(m, exercise_id: str) -> str:
    """A grid cell that opens on the hand-in: verdict and mistake, points and cases passed, the
    message and its line, and why nothing was graded or which autograder cells changed."""
    lines = [f'<div class="head">{escape(exercise_id)}: {escape(label(m.verdict))}</div>']
    if m.verdict == NOT_SUBMITTED:
        lines.append(f'<div class="msg">{escape(m.note or "Nothing handed in for this exercise.")}</div>')
    elif m.verdict == NOT_ATTEMPTED:
        lines.append('<div class="msg">The starter, handed in unchanged.</div>')
    else:
        if m.mistake and m.mistake != m.verdict:
            lines.append(f"<div>Mistake: {escape(mistake_text(m.mistake))}</div>")
        cases = f"{m.cases_passed} of {m.cases} cases passed" if m.cases else "no case ran"
        lines.append(f"<div>{m.score:g} / {m.max_score:g} points · {cases}</div>")
        if m.message:
            text = m.message if len(m.message) <= MAX_MESSAGE else m.message[: MAX_MESSAGE - 3] + "..."
            lines.append(f'<div class="msg">{prose_html(text)}</div>')
        if m.line:
            lines.append(f"<pre>line {m.line}: {escape(m.source.strip())}</pre>")
    if m.autograder_cells:
        lines.append(f'<div class="warn">Autograder cells: {escape(m.autograder_cells)}</div>')
    if m.regraded:
        lines.append(f'<div class="dim">Regraded on its stored seed ({escape(m.regraded)}).</div>')
    cell = _cell(m.verdict, exercise_id, m.regraded)
    return f'<details><summary>{cell}</summary><div class="pop">{"".join(lines)}</div></details>'


def _footer(report: ClassReport) -> str:
    return (
        "<footer><p>Made by <code>zerogpu report</code>. Alongside this page: "
        "<code>students.csv</code> (one row per student: score, stuck on, every verdict), "
        "<code>exercises.csv</code> (one row per exercise: pass rate, verdict counts, speed) and "
        "<code>submissions.csv</code> (one row per student and exercise: verdict, mistake, "
        "points, cases passed, message).</p>"
        "<p>Score: points earned ÷ points available over the exercises in the gradebook. "
        "Speed figures come only from results timed on a GPU; blank means not measured, "
        "never zero.</p></footer>"
    )

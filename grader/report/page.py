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
from pathlib import Path
from urllib.parse import quote

from grader.classroom.gradebook import NOT_SUBMITTED
from grader.report.data import ALL_OR_NOTHING, NO_GPU, NOT_ATTEMPTED, VERDICT_ORDER, ClassReport, tier_names
from grader.report.plots import VERDICT_COLOURS, label
from grader.result import MISTAKES
from grader.render import prose_html
from grader.report.templates import html, render
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

CSS = (Path(__file__).parent / "templates" / "report.css").read_text()
"""The page's style sheet, inlined into it (and into each feedback page)."""


def page(report: ClassReport, images: dict, *, title: str | None = None, generated: float | None = None) -> str:
    sections = [
        _header(report, title, generated),
        _cards(report),
        _findings(report),
        _attention(report),
        _exercises(report),
        _mistakes(report, images["verdicts"]),
        _speed(report, images["speed"]),
        _leaderboard(report),
        _scores(report, images["scores"]),
        _students(report),
    ]
    return render(
        "page.html.j2",
        title=title or "Class report",
        css=html(CSS),
        sections=[html(s) for s in sections],
        feedback=bool(report.feedback_pages),
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


def _look(title: str, rows, lede: str, columns: tuple, csv: str = "submissions.csv") -> dict:
    return {"title": title, "rows": list(rows), "lede": lede, "columns": columns, "csv": csv}


def _attention(report: ClassReport) -> str:
    """Hand-ins that could not be graded, entries that are no student, files no exercise reads,
    edited autograder cells, out-of-date feedback and hand-ins far more alike than the class's
    usual pair, each with the reason: nothing is dropped silently."""
    pairs = [(p.exercise, p.first, p.second, f"{p.score:.2f} (the usual pair: {p.usual:.2f})") for p in report.pairs]
    tables = [
        _look(
            "Could not be graded",
            report.not_graded,
            "Counted as not submitted (0 points) until the hand-in is fixed and graded again.",
            ("student", "exercise", "why"),
        ),
        _look(
            "Not students",
            report.not_students,
            "Entries of the class folder graded as nobody: links (to another student's folder: the same "
            "work twice, a copy?) and folders that could not be read. They are in no CSV.",
            ("entry", "why"),
        ),
        _look("Files not graded", report.files, "Handed in, but no exercise reads them.", ("student", "file", "why")),
        _look(
            "Autograder cells edited or deleted",
            report.edited_cells,
            "These cells never ran the grading (zerogpu grade reads only the exercise cell) and nbgrader "
            "autograde puts them back, so the points stand; the hand-in still changed cells it was told not to touch.",
            ("student", "exercise", "cells"),
        ),
        _look(
            "Feedback out of date",
            report.stale_feedback,
            "nbgrader feedback that shows results graded again since; its pages say so too.",
            ("student", "assignment", "what to do"),
        ),
        _look(
            "Far more alike than the class's usual pair",
            pairs,
            "Hand-ins of one exercise whose code matches once names are ignored, beyond what the starter, the "
            "solution and the class's common code explain (docs/COURSE.md, Similarity): a reason to look, not a verdict.",
            ("exercise", "student", "student", "score"),
            "similarity.csv",
        ),
    ]
    return render("look.html.j2", tables=[t for t in tables if t["rows"]], most=MAX_LISTED)


def _leaderboard(report: ClassReport) -> str:
    return render("leaderboard.html.j2", boards=report.boards, why=report.no_board, names=report.names)


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
    return render(
        "speed.html.j2",
        chart=None if png is None else html(_img(png, "Speedup distribution per exercise")),
        no_gpu=NO_GPU,
        tiers=tier_names(report),
        timed=[e for e in report.exercises if e.speedups],
        rejected=sum(e.rejected_timings for e in report.exercises),
        untimed=[e.id for e in report.exercises if e.passed and not e.speedups],
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
            f'<tr><td class="id">{_student_link(report, s.name)}</td>'
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


def _student_link(report: ClassReport, name: str) -> str:
    """A student's name, linked to their feedback page when there is one."""
    page_file = report.feedback_pages.get(name)
    return f'<a href="feedback/{quote(page_file)}">{escape(name)}</a>' if page_file else escape(name)


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

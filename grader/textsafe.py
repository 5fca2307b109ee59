"""Learner text made safe for where the grader shows or stores it.

Messages, hints, source lines, file and student folder names come from submissions, so they
may hold anything: terminal escape sequences (clear the screen, colour a fake PASSED, write the
clipboard through OSC 52), bidirectional overrides that reorder what a reader sees, lone
surrogates (an undecodable file name; `"\\udcff"` in a learner's exception) that no UTF-8
writer accepts, spreadsheet formulas, megabytes of text. Each writer passes such text through
one of these functions at its boundary:

- `unsurrogate`: for every file writer (HTML, CSV, JSON, sqlite): a lone surrogate becomes its
  backslash escape (`\\udcff`), so the text encodes as UTF-8 and two different names stay apart.
- `terminal_text`: for the terminal: escape sequences, control characters (but newline and
  tab) and bidirectional controls each become one U+FFFD, visible and inert;
  `terminal_segments` does it to what a rich console prints.
- `html_text`: for HTML: `terminal_text`'s rules (a bidirectional override misleads a reader
  there too), then escaped.
- `csv_cell`: a spreadsheet cell: `terminal_text`'s rules (a CSV is often read with `cat`),
  and text starting with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`
  (OWASP's rule for CSV injection), so it is never a formula.
- `capped`: at most `limit` characters, saying how many were cut.
"""

from __future__ import annotations

import html
import re

REPLACEMENT = "\ufffd"
"""What a neutralised control sequence becomes: visible, and inert on every terminal."""

_ESCAPE_SEQUENCE = re.compile(
    r"""
      \x1b\][^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?    # OSC (titles, OSC 52 clipboard, OSC 8 links)
    | \x1b[PX^_][^\x1b\x9c\n]*(?:\x1b\\|\x9c)?          # DCS, SOS, PM, APC strings
    | \x1b\[[0-?]*[\ -/]*[@-~]?                       # CSI (cursor moves, erase, colours)
    | \x1b[\ -/]*[0-~]?                               # the other escapes (charsets, reset)
    | \x9b[0-?]*[\ -/]*[@-~]?                         # the 8-bit CSI
    | [\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?  # 8-bit DCS, SOS, OSC, PM, APC
    """,
    re.VERBOSE,
)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""C0 controls but tab and newline, DEL, C1 controls, and the bidirectional marks, embeddings,
overrides and isolates (Trojan Source's characters)."""
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def unsurrogate(text: str) -> str:
    """`text` with each lone surrogate as its backslash escape: encodable as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def terminal_text(text: str) -> str:
    """`text` as a terminal may print it: no escape sequence, no control character but newline
    and tab, no bidirectional control, no lone surrogate."""
    if text.isprintable():  # the common case, in C: none of those is printable
        return text
    text = unsurrogate(text).replace("\r\n", "\n")
    return _CONTROL.sub(REPLACEMENT, _ESCAPE_SEQUENCE.sub(REPLACEMENT, text))


def terminal_segments(segments):
    """Rich's segments for a terminal: each text through `terminal_text`; control segments
    (rich's own colours and cursor moves) as they are."""
    for segment in segments:
        yield segment if segment.control else segment._replace(text=terminal_text(segment.text))


def html_text(text: str) -> str:
    """`text` for an HTML page: neutralised as for a terminal, then escaped (quotes too)."""
    return html.escape(terminal_text(text))


def csv_cell(value):
    """A CSV cell: text never read as a formula, printable and encodable; numbers as they are."""
    if not isinstance(value, str):
        return value
    value = terminal_text(value)
    return "'" + value if value.startswith(_FORMULA_START) else value


def capped(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters and how many were cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} characters cut)"

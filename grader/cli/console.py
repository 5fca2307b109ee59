"""The terminal the commands print to: rich consoles that never break a path or a command
across lines (soft wrap), and one-line errors.

Whatever a command prints may hold a learner's words (a message, a student folder's name, a
file name), so every text these consoles print passes through `textsafe.terminal_segments`: no
escape sequence, control character or bidirectional override of a submission reaches the
terminal. Rich's own colours and cursor moves are control segments and pass unchanged."""

from __future__ import annotations

from functools import cache

from grader.textsafe import terminal_segments

EXIT_PASSED, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


@cache
def _safe_console_class():
    from rich.console import Console

    class SafeConsole(Console):
        def render(self, renderable, options=None):
            yield from terminal_segments(super().render(renderable, options))

    return SafeConsole


def console(stderr: bool = False):
    return _safe_console_class()(stderr=stderr, highlight=False, soft_wrap=True)


def error(message: str) -> int:
    """One red line on stderr; `message` is printed as it is (never read as markup)."""
    from rich.markup import escape

    console(stderr=True).print(f"[red]error:[/] {escape(str(message))}")
    return EXIT_USAGE

"""The terminal the commands print to: rich consoles that never break a path or a command
across lines (soft wrap), and one-line errors."""

from __future__ import annotations

EXIT_PASSED, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def error(message: str) -> int:
    console(stderr=True).print(f"[red]error:[/] {message}")
    return EXIT_USAGE

"""A check's progress in a notebook: one line under the cell that follows the case under way
(as `zerogpu check` does in a terminal) and is cleared when the result shows."""

from __future__ import annotations

from contextlib import contextmanager
from html import escape

STYLE = "font-family:sans-serif;color:#57606a;margin:2px 0"


@contextmanager
def status_line(heading: str):
    """Yields `update(line)` that rewrites the line, or None outside a notebook's kernel."""
    try:
        from IPython import get_ipython
        from IPython.display import HTML, display
    except ImportError:
        yield None
        return
    shell = get_ipython()
    if shell is None or not hasattr(shell, "kernel"):
        yield None
        return

    def shown(line: str = "") -> HTML:
        tail = f" {escape(line)}…" if line else ""
        return HTML(f"<p style='{STYLE}'>{escape(heading)}{tail}</p>")

    handle = display(shown(), display_id=True)
    try:
        yield lambda line: handle.update(shown(line))
    finally:
        handle.update(HTML(""))

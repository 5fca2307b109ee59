"""The report's Jinja2 templates (grader/report/templates/), rendered with autoescape on: every
text from the gradebook (a student folder's name, a message, a file name) is neutralised by
`textsafe.terminal_text` (control and bidirectional characters, lone surrogates) and then
escaped, whatever the template does with it. HTML the grader builds itself (a result's card from
grader/render.py, a chart) enters as `Markup` and is left as it is."""

from __future__ import annotations

from functools import cache

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from grader.textsafe import terminal_text

FOLDER = __file__.rsplit("/", 1)[0] + "/templates"


def _neutral(value):
    """What `{{ value }}` prints before escaping: learner text made inert, our HTML untouched."""
    if isinstance(value, Markup) or not isinstance(value, str):
        return value
    return terminal_text(value)


@cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(FOLDER),
        autoescape=True,
        finalize=_neutral,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["count"] = lambda n: f"{n:,}"
    return env


def render(name: str, **values) -> str:
    """Template `name` (grader/report/templates/) filled with `values`."""
    return environment().get_template(name).render(**values)


def html(text: str) -> Markup:
    """HTML the grader built (every learner text in it already through `textsafe.html_text`)."""
    return Markup(text)

"""How results show themselves (`__str__`, `_repr_html_`): this data layer sits below the
renderers, so grader/wiring.py installs the real views (grader/render.py, grader/doctor/summary.py)
in place of these plain ones."""

from __future__ import annotations

VIEWS = {
    "text": lambda result: result.to_json(),
    "html": lambda result: f"<pre>{result.to_json(indent=2)}</pre>",
    "doctor_text": repr,
    "doctor_html": lambda report: f"<pre>{report!r}</pre>",
}
"""View name -> function of a CheckResult ("text", "html") or a DoctorReport ("doctor_text",
"doctor_html")."""

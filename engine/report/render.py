"""The report page, rendered with Jinja from the package's own template. Everything a run
brings (outputs, prompts, reasons) is user data: it reaches the page only as variables,
escaped by autoescape, and the environment is sandboxed like every other in the project."""

from __future__ import annotations

from pathlib import Path

from jinja2 import FileSystemLoader, StrictUndefined, select_autoescape
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ..formatting import to_json
from .build import Report

_TEMPLATES = Path(__file__).parent / "templates"


def _figure(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{round(value, digits):g}"


def render_report(report: Report) -> str:
    environment = ImmutableSandboxedEnvironment(
        loader=FileSystemLoader(_TEMPLATES), autoescape=select_autoescape(["html", "j2"], default=True), undefined=StrictUndefined,
        trim_blocks=True, lstrip_blocks=True,
    )
    environment.filters["figure"] = _figure
    environment.filters["json"] = to_json
    return environment.get_template("report.html.j2").render(report=report)

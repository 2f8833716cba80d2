"""A report people look at and share: one self-contained HTML file of a stored run (or two
runs compared) that works offline: no CDN, no server, charts drawn as inline SVG.

    html = render_report(build_report(store, "nightly", compare="nightly-strict"))
"""

from __future__ import annotations

from .build import Report, build_report
from .render import render_report

__all__ = ["Report", "build_report", "render_report"]

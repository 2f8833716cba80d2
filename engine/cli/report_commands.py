"""`scorers report`: one self-contained HTML page of a stored run (or two, compared)."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..errors import ConfigError
from ..report import build_report, render_report
from ..store import open_store, store_backend
from .app import app, errors
from .common import DEFAULT_STORE, StoreOption, one_line_errors


@app.command("report")
@one_line_errors
def report_command(
    run: Annotated[str, typer.Argument(help="The run to show (see `scorers results`)")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML file to write")] = Path("report.html"),
    compare: Annotated[Optional[str], typer.Option("--compare", help="A second run to compare with RUN")] = None,
    store: StoreOption = DEFAULT_STORE,
) -> None:
    """Write one HTML file (works offline, no server) with the figures, charts and every item."""
    if not store_backend(store).exists(store):
        raise ConfigError(f"no results store at {store} (`scorers eval` creates it; --store picks another)")
    opened = open_store(store, reading=True)  # a store on a read-only disk can still be read
    assert opened is not None
    with closing(opened) as results:
        report = build_report(results, run, compare)
    try:
        output.write_text(render_report(report), encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write {output}: {exc.strerror}") from None
    listed = f"{len(report.items)} items" if report.shown is None else f"{len(report.items)} of {report.item_count} items listed; every item: {report.export}"
    errors.print(f"wrote {output} ({listed}, {len(report.sections)} scorer result(s)); open it in a browser", markup=False, highlight=False)

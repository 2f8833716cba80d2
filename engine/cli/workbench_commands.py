"""`scorers workbench`: the local web app where a prompt tuner edits a scorer, previews its
prompts, runs it on labelled items and saves versions (engine/workbench)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ..workbench import serve
from .app import app, errors
from .common import DEFAULT_STORE, StoreOption, one_line_errors
from .options import JudgeSetup, flags


@app.command("workbench")
@one_line_errors
@flags(JudgeSetup)
def workbench_command(
    setup: JudgeSetup,
    catalog: Annotated[Path, typer.Argument(help="Your catalog folder (or its YAML file); edits and variants of built-in scorers are saved there")] = Path("."),
    data: Annotated[Optional[Path], typer.Option("--data", help="A labelled data set (JSONL), selected at start (the .jsonl files where the workbench starts and in its examples/ folder are offered too; no other file is read)")] = None,
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Print the address without opening a browser")] = False,
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port on 127.0.0.1 (0: a free one)")] = 0,
    store: StoreOption = DEFAULT_STORE,
    max_cost: Annotated[Optional[float], typer.Option("--max-cost", min=0.000001, help="Stop a run (resumably) once its estimated spend reaches this many US dollars")] = None,
) -> None:
    """Open the workbench: edit a scorer, see its exact prompts, run it on labelled items and
    compare with the last saved version, in a local web page."""
    if data is not None and not data.is_file():
        raise typer.BadParameter(f"{data}: no such file", param_hint="--data")
    serve(catalog, store, data=data, judge=setup.judge(), port=port, max_cost=max_cost, open_browser=not no_browser, announce=lambda line: errors.print(line, markup=False, highlight=False, soft_wrap=True))

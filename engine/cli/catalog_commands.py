"""Commands about the catalog itself: what scorers there are, whether a catalog is valid,
and the JSON Schema of the format."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from ..catalog import check_catalog
from ..catalog.spec import catalog_json_schema
from ..errors import ConfigError
from .app import app, console, errors
from .common import ConfigOption, JsonFlag, catalog_from, one_line_errors, print_json


@app.command("list")
@one_line_errors
def list_scorers(config: ConfigOption = None, as_json: JsonFlag = False) -> None:
    """Show the scorers of the catalog."""
    catalog = catalog_from(config)
    definitions = [catalog.definition(scorer_id) for scorer_id in catalog.ids()]
    judged = {scorer_id: catalog.plan(scorer_id).needs_judge for scorer_id in catalog.ids()}
    if as_json:
        rows = [
            {"id": d.id, "name": d.name, "direction": d.direction, "requires": d.requires, "judge": judged[d.id], "description": d.description}
            for d in definitions
        ]
        print_json(rows)
        return
    table = Table(title="Scorers")
    for column in ("id", "name", "better", "needs", "judge", "description"):
        table.add_column(column, overflow="fold")
    for d in definitions:
        better = "lower" if d.direction == "lower_is_better" else "higher"
        table.add_row(d.id, d.name, better, ", ".join(d.requires), "yes" if judged[d.id] else "no", d.description)
    console.print(table)


@app.command("schema")
@one_line_errors
def catalog_schema() -> None:
    """Print the JSON Schema of the catalog format, for editors that complete and check YAML."""
    print_json(catalog_json_schema())


def _shown(problem: ConfigError) -> str:
    """FILE:LINE:COLUMN: message, the file relative to the current folder when it is below it
    (as compilers print it, so editors and terminals can jump to it)."""
    if problem.path is not None:
        relative = os.path.relpath(problem.path)
        if not relative.startswith(".."):
            return str(ConfigError(problem.message, relative, problem.line, problem.column))
    return str(problem)


@app.command("check")
@one_line_errors
def check_command(
    paths: Annotated[Optional[list[Path]], typer.Argument(help="Catalog files or folders holding one (default: the built-in catalog)")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Validate catalogs without a model or a key: every problem of every file, one line each
    (FILE:LINE:COLUMN: message); exit 1 when there is any."""
    problems: list[ConfigError] = []
    scorers = 0
    targets: list[Path | None] = list(paths) if paths else [None]
    for path in targets:
        found, count = check_catalog(path)
        problems.extend(found)
        scorers += count
    if as_json:
        print_json([{"file": p.path, "line": p.line, "column": p.column, "message": p.message} for p in problems])
    else:
        for problem in problems:
            print(_shown(problem))
    files = len(targets)
    if problems:
        errors.print(f"{len(problems)} problem{'s' if len(problems) > 1 else ''} in {files} catalog{'s' if files > 1 else ''}", highlight=False)
        raise typer.Exit(1)
    errors.print(f"ok: {scorers} scorers in {files} catalog{'s' if files > 1 else ''}", highlight=False)

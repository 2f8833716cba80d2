"""Commands about the catalog itself: what scorers there are."""

from __future__ import annotations

from rich.table import Table

from ..catalog.spec import catalog_json_schema
from .app import app, console
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

"""`scorers judges`: the providers a judge can come from, the variables each reads, and which
of them are set (never their values)."""

from __future__ import annotations

import json
import os
from typing import Any

from rich.table import Table

from ..judge import PROVIDERS, Provider
from .app import app, console
from .common import ConfigOption, JsonFlag, one_line_errors


def _rows(providers: dict[str, Provider]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name, provider in providers.items():
        variables = {variable: bool(os.environ.get(variable)) for variable in provider.variables()}
        key_set = bool(provider.api_key_env and os.environ.get(provider.api_key_env))
        rows.append(
            {
                "provider": name,
                "model": f"{name}/<model>" if provider.adapter != "azure" else "azure/<deployment>",
                "adapter": provider.adapter,
                "endpoint": provider.base_url,
                "variables": variables,
                "key_needed": provider.key_needed,
                "ready": key_set or not provider.key_needed,
                "about": provider.about,
            }
        )
    return rows


@app.command("judges")
@one_line_errors
def list_judges(config: ConfigOption = None, as_json: JsonFlag = False) -> None:
    """Show the judge providers, the variables each reads, and which are set."""
    providers = dict(PROVIDERS)
    if config is not None:
        from .common import catalog_from

        providers.update(catalog_from(config).providers)
    rows = _rows(providers)
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    table = Table(title="Judge providers (use as --model PROVIDER/MODEL)")
    for column in ("provider", "variables (set: ✓)", "endpoint"):
        table.add_column(column, overflow="fold")
    for row in rows:
        variables = row["variables"]
        assert isinstance(variables, dict)
        shown = "\n".join(f"{name} {'✓' if is_set else '-'}" for name, is_set in variables.items()) or "-"
        endpoint = row["endpoint"] or ("AZURE_OPENAI_ENDPOINT" if row["adapter"] == "azure" else "the provider's own")
        table.add_row(str(row["provider"]), shown, str(endpoint))
    console.print(table)
    console.print("A key variable marked - must be set before that provider's hosted service can judge; local servers need none.", highlight=False)

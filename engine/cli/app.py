"""The `scorers` Typer application and its two consoles (results on stdout, everything
else on stderr)."""

from __future__ import annotations

import typer
from rich.console import Console

app = typer.Typer(
    name="scorers",
    help="Score LLM outputs with LLM judges defined in YAML.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
errors = Console(stderr=True)

"""The `scorers` command: a thin client of the public API. Each module adds its commands to
the one Typer application."""

from __future__ import annotations

from . import (
    cache_commands,
    catalog_commands,
    evaluate,
    judges_commands,
    monitor_commands,
    report_command,
    rescore_commands,
    results,
    run_commands,
    tuning_commands,
    workbench_command,
)
from .app import app, finish

finish(app)

__all__ = [
    "app",
    "cache_commands",
    "catalog_commands",
    "evaluate",
    "judges_commands",
    "monitor_commands",
    "report_command",
    "rescore_commands",
    "results",
    "run_commands",
    "tuning_commands",
    "workbench_command",
]

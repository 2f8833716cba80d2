"""The `scorers` command: a thin client of the public API. Each command module adds its
commands to the one Typer application; the application imports a module when one of its
commands is first used (`COMMAND_MODULES` in .app), so a command loads only what it needs."""

from __future__ import annotations

from ..collector import collector_held

with collector_held(lasting=True):  # the modules the command line is built on stay loaded
    from .app import app, finish

finish(app)

__all__ = ["app"]

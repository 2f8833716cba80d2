"""`scorers cache`: what the response cache holds, and clearing it."""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from ..errors import ConfigError
from ..judge import ResponseCache, default_cache_location
from ..judge.prices import user_prices_path
from .app import Subgroup, app, console
from .common import JsonFlag, one_line_errors

cache_app = typer.Typer(help="The response cache: judge answers kept on disk so a question is paid for once.", no_args_is_help=True, cls=Subgroup)
app.add_typer(cache_app, name="cache")

CacheOption = Annotated[
    Optional[str],
    typer.Option("--cache", help="The cache: a file or a postgresql:// URL (default: SCORERS_CACHE, else a file in the user cache directory)"),
]
_AGE = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_age(text: str) -> float:
    """Seconds in an age such as 30d, 12h, 90m, 2w."""
    found = _AGE.match(text.strip())
    if not found:
        raise ConfigError(f"--older-than {text!r}: expected a number and a unit (s, m, h, d, w), e.g. 30d")
    return float(found.group(1)) * _SECONDS[found.group(2)]


def _existing(location: str | None) -> ResponseCache:
    chosen = location or default_cache_location()
    if isinstance(chosen, Path) or "://" not in chosen:  # a database's tables are made when it is opened
        path = Path(chosen).expanduser()
        if not path.is_file():
            raise ConfigError(f"no response cache at {path} yet (`scorers eval` creates it)")
    return ResponseCache(chosen)


def _size(size: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size //= 1024
    return f"{size} B"


@cache_app.command("stats")
@one_line_errors
def stats_command(cache: CacheOption = None, as_json: JsonFlag = False) -> None:
    """Entries, size on disk (or in the database), and the hit rate of recent runs."""
    with _existing(cache) as opened:
        stats = opened.stats()
    if as_json:
        print(json.dumps(asdict(stats), indent=2))
        return
    console.print(f"{stats.location}: {stats.entries} answers, {_size(stats.size_bytes)}", highlight=False)
    for model, count in stats.models.items():
        console.print(f"  {model}: {count}", highlight=False)
    if stats.recent:
        table = Table(title="recent runs using the cache")
        for column in ("started", "hits", "misses", "hit rate"):
            table.add_column(column, justify="left" if column == "started" else "right")
        for started, hits, misses in stats.recent:
            when = datetime.fromtimestamp(started).strftime("%Y-%m-%d %H:%M")
            table.add_row(when, str(hits), str(misses), f"{hits / (hits + misses):.0%}")
        console.print(table)
    console.print(f"Prices are read from the shipped table and {user_prices_path()} (if present).", highlight=False)


@cache_app.command("clear")
@one_line_errors
def clear_command(
    cache: CacheOption = None,
    older_than: Annotated[Optional[str], typer.Option("--older-than", help="Only answers stored longer ago than this, e.g. 30d, 12h")] = None,
    model: Annotated[Optional[str], typer.Option("--model", help="Only answers of this judge model (provider/model)")] = None,
) -> None:
    """Delete cached answers (all, or the old ones, or one model's)."""
    age = parse_age(older_than) if older_than is not None else None
    with _existing(cache) as opened:
        deleted = opened.clear(older_than=age, model=model)
    console.print(f"deleted {deleted} cached answer(s) from {opened.location}", highlight=False)

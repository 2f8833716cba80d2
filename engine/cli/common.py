"""What the commands share: one-line errors, reading `@file` values, `--option` pairs, and
the option declarations every command spells the same way."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Annotated, Any, Optional, TypeVar

import typer
import yaml

from ..catalog import Catalog, builtin_catalog, load_scorers
from ..errors import ConfigError, ScorerError
from ..formatting import to_json
from .app import errors

F = TypeVar("F", bound=Callable[..., Any])

ConfigOption = Annotated[Optional[Path], typer.Option("--config", help="A host catalog YAML (its scorers, prompts, schemas)")]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for tools")]
# The fields of one run, shared by `run` and `preview`.
ScorerArgument = Annotated[str, typer.Argument(help="Scorer id (see `scorers list`)")]
InputOption = Annotated[Optional[str], typer.Option("--input", help="The user's input; @file reads a file")]
ContextOption = Annotated[Optional[list[str]], typer.Option("--context", help="A context piece; repeat for more; @file reads a file")]
GroundTruthOption = Annotated[Optional[str], typer.Option("--ground-truth", help="The expected answer; @file reads a file")]
ScorerOptions = Annotated[Optional[list[str]], typer.Option("--option", help="Scorer option NAME=VALUE; repeat for more")]


def one_line_errors(command: F) -> F:
    """Every failure ends as one line on stderr and a non-zero exit, never a traceback
    (set SCORERS_DEBUG=1 to see it)."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        # Instructor logs every failed attempt; the command reports the outcome itself.
        logging.getLogger("instructor").addHandler(logging.NullHandler())
        logging.getLogger("instructor").propagate = False
        try:
            return command(*args, **kwargs)
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            errors.print("interrupted")
            raise typer.Exit(130) from None
        except BrokenPipeError:  # `scorers ... | head`: the reader has gone, nothing to say
            # Python flushes stdout again at exit; point it at /dev/null so that is silent too.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(0) from None
        except Exception as exc:
            if os.environ.get("SCORERS_DEBUG"):
                raise
            kind = "error" if isinstance(exc, ScorerError) else f"unexpected error ({type(exc).__name__})"
            errors.print(f"{kind}: {exc}", markup=False, highlight=False, soft_wrap=True)
            raise typer.Exit(2 if isinstance(exc, ConfigError) else 1) from None

    return wrapper  # type: ignore[return-value]


def catalog_from(config: Path | None) -> Catalog:
    return load_scorers(config) if config is not None else builtin_catalog()


def read_value(value: str | None) -> Any:
    """`@path` reads a file (`@-` stdin); a `.json` file holding messages becomes messages."""
    if value is None or not value.startswith("@"):
        return value
    source = value[1:]
    if source == "-":
        return sys.stdin.read()
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    if path.suffix == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"invalid JSON: {exc.msg}", path, exc.lineno) from None
    return text


def parse_options(pairs: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        name, separator, raw = pair.partition("=")
        if not separator or not name.strip():
            raise ConfigError(f"--option {pair!r}: expected NAME=VALUE")
        try:
            options[name.strip()] = yaml.safe_load(raw) if raw.strip() else raw
        except yaml.YAMLError:
            options[name.strip()] = raw
    return options


def scorer_options(pairs: list[str] | None, context: list[str] | None) -> dict[str, Any]:
    """`--option` pairs, plus the `--context` pieces as the `context` option."""
    options = parse_options(pairs or [])
    if context:
        options["context"] = [str(read_value(piece)) for piece in context]
    return options


DEFAULT_STORE = str(Path(".scorers") / "results.sqlite")
StoreOption = Annotated[
    str,
    typer.Option(
        "--store",
        envvar="SCORERS_STORE",
        help="The results database: a SQLite file, or postgresql://user:password@host/db (shared by many machines)",
    ),
]


def print_json(value: object) -> None:
    """Machine-readable output for `--json`: indented, non-ASCII text kept readable."""
    print(to_json(value, indent=2))

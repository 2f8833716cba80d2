"""The `scorers` Typer application and its two consoles (results on stdout, everything
else on stderr), with the help and errors a person expects: `--version`, shell completion,
no value placeholder after flags, and a did-you-mean for a misspelled command."""

from __future__ import annotations

import difflib
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any

import typer
from rich.console import Console
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption


#: The exit statuses every command follows; the README's table says the same (a test checks).
EXIT_STATUSES: tuple[tuple[int, str], ...] = (
    (0, "done: the score printed, every item scored and every gate passed"),
    (
        1,
        "the work failed: a --threshold not met, more items failed than --max-errors allows, a scorer scored no item "
        "at all (each not scorable or failed), the run stopped "
        "before scoring every item (the judge failed, --max-cost reached), or `check` found problems",
    ),
    (
        2,
        "usage: an unknown scorer, option or flag; a data file or store that cannot be used (missing, empty, "
        "duplicate ids, not UTF-8); a value the scorer needs and was not given; a key or model the judge refuses",
    ),
    (130, "interrupted by Ctrl-C or SIGTERM: what was scored is saved; the same command with --run NAME continues"),
)
EXIT_EPILOG = "Exit status: " + "; ".join(f"{status} {meaning}" for status, meaning in EXIT_STATUSES) + "."


def suggestion(word: str, choices: list[str]) -> str:
    """' (did you mean X?)' for the closest choice, or ''."""
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _labelled(params: list[Any]) -> list[Any]:
    """No value placeholder after a flag; each value named by what it is (TEXT, NUMBER,
    PATH) rather than by its Python type."""
    for param in params:
        if param.metavar is not None:
            continue
        if isinstance(param, TyperOption) and (param.is_flag or param.count):
            param.metavar = ""
        elif isinstance(param, TyperArgument):
            param.metavar = (param.name or "value").upper()
        else:
            bare = param.bare_type().removeprefix("list[").removesuffix("]")
            param.metavar = {"str": "TEXT", "float": "NUMBER", "int": "INTEGER"}.get(bare, "PATH" if param.type_descriptor.is_path else bare.upper())
    return params


class Command(TyperCommand):
    """A command with the help conventions of `_labelled`."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _labelled(super().get_params(ctx))


class Group(TyperGroup):
    """The command group: an unknown command gets the closest known one suggested."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            ctx.fail(f"no command {name!r}{suggestion(name, self.list_commands(ctx))}; `scorers --help` lists them")
        return super().resolve_command(ctx, args)

    def get_params(self, ctx: Any) -> list[Any]:
        return _labelled(super().get_params(ctx))


app = typer.Typer(
    name="scorers",
    help="Score LLM outputs with LLM judges defined in YAML.",
    cls=Group,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    epilog=EXIT_EPILOG,
)
console = Console()
errors = Console(stderr=True)


def package_version() -> str:
    try:
        return version("llm-scorers")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown"


def _show_version(value: bool) -> None:
    if value:
        print(f"llm-scorers {package_version()}")
        raise typer.Exit()


@app.callback()
def main(
    show_version: Annotated[bool, typer.Option("--version", help="Show the version and exit", is_eager=True, callback=_show_version)] = False,
) -> None:
    """Score LLM outputs with LLM judges defined in YAML."""


def finish(application: typer.Typer, command_class: type[Any] = Command) -> None:
    """Give every registered command the help conventions above, and the exit statuses."""
    for info in application.registered_commands:
        if info.cls is None or info.cls is TyperCommand:
            info.cls = command_class
        if info.epilog is None:
            info.epilog = EXIT_EPILOG

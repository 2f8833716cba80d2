"""The `scorers` Typer application and its two consoles (results on stdout, everything
else on stderr), with the help and errors a person expects: `--version`, shell completion,
no value placeholder after flags, and a did-you-mean for a misspelled command."""

from __future__ import annotations

import difflib
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any

import typer
from rich.console import Console
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption
from typer.main import get_command_from_info, get_command_name, get_group_from_info

from ..collector import collector_held, runs_one_command


#: The exit statuses every command follows; the README's table says the same (a test checks).
EXIT_STATUSES: tuple[tuple[int, str], ...] = (
    (0, "done: the score printed, every item scored and every gate passed"),
    (
        1,
        "the work failed: a --threshold not met, a scorer scored fewer items than --min-coverage asks (all, by default: "
        "an item not scorable or failed is not covered), more items failed than --max-errors allows, the run stopped "
        "before scoring every item (the judge failed, --max-cost reached), an alert no receiver took, or `check` found problems",
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

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        with collector_held(lasting=True):  # the first parse loads pydantic and builds Typer's validators: they stay
            return list(super().parse_args(ctx, args))


class Subgroup(TyperGroup):
    """A group of commands under one (`scorers cache ...`), with the same help conventions."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _labelled(super().get_params(ctx))


#: The module that registers each command, in the order `scorers --help` lists them. A
#: command's module, and the runs, store, align or workbench code it needs, is imported when
#: the command is run (or listed by --help), so `scorers list` starts without the rest.
#: tests/test_cli_lazy_commands.py checks the table against what the modules register.
COMMAND_MODULES: dict[str, str] = {
    "compare": "tuning_commands",
    "calibrate": "tuning_commands",
    "align": "align_commands",
    "list": "catalog_commands",
    "show": "catalog_commands",
    "init": "catalog_commands",
    "schema": "catalog_commands",
    "check": "catalog_commands",
    "eval": "eval_commands",
    "judges": "judges_commands",
    "results": "results_commands",
    "monitor": "monitor_commands",
    "report": "report_commands",
    "rescore": "rescore_commands",
    "pairwise": "rescore_commands",
    "run": "run_commands",
    "preview": "run_commands",
    "workbench": "workbench_commands",
    "cache": "cache_commands",
    "queue": "queue_commands",
    "collect": "collect_commands",
}


class Group(TyperGroup):
    """The command group: commands load on first use (see COMMAND_MODULES), and an unknown
    command gets the closest known one suggested."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMAND_MODULES)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in COMMAND_MODULES:
            with collector_held(lasting=True):  # a command's modules stay loaded
                import_module(f"{__package__}.{COMMAND_MODULES[cmd_name]}")
            self._add_registered()
            command = super().get_command(ctx, cmd_name)
        return command

    def _add_registered(self) -> None:
        """Add the commands registered on `app` since this group was built."""
        finish(app)
        for info in app.registered_commands:
            name = info.name or get_command_name(info.callback.__name__ if info.callback else "")
            if name not in self.commands:
                self.add_command(get_command_from_info(info, pretty_exceptions_short=app.pretty_exceptions_short, rich_markup_mode=app.rich_markup_mode), name)
        for group in app.registered_groups:
            if group.name and group.name not in self.commands:
                if group.typer_instance is not None:
                    finish(group.typer_instance)
                sub = get_group_from_info(group, pretty_exceptions_short=app.pretty_exceptions_short, suggest_commands=app.suggest_commands, rich_markup_mode=app.rich_markup_mode)
                self.add_command(sub, group.name)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        with collector_held(lasting=True):  # as `Command.parse_args`
            return list(super().parse_args(ctx, args))

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            ctx.fail(f"no command {name!r}{suggestion(name, self.list_commands(ctx))}; `scorers --help` lists them")
        return super().resolve_command(ctx, args)

    def get_params(self, ctx: Any) -> list[Any]:
        return _labelled(super().get_params(ctx))


class Scorers(typer.Typer):
    """The application; called, it is the `scorers` script, a process that runs one command."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        runs_one_command()
        return super().__call__(*args, **kwargs)


app = Scorers(
    name="scorers",
    help="Score LLM outputs with LLM judges defined in YAML.",
    cls=Group,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    epilog=EXIT_EPILOG,
)
# No emoji codes: a reason or an id holding `:warning:` is shown as written (and rich's
# table of codes is not loaded for every command).
console = Console(emoji=False)
errors = Console(stderr=True, emoji=False)


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

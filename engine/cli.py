"""The `scorers` command: a thin client of the public API."""

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
from rich.console import Console
from rich.rule import Rule
from rich.table import Table

from .catalog import Catalog, builtin_catalog, load_scorers
from .errors import ConfigError, ScorerError
from .preview import preview

app = typer.Typer(
    name="scorers",
    help="Score LLM outputs with LLM judges defined in YAML.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
errors = Console(stderr=True)

F = TypeVar("F", bound=Callable[..., Any])

ConfigOption = Annotated[Optional[Path], typer.Option("--config", help="A host catalog YAML (its scorers, prompts, schemas)")]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for tools")]


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


@app.command("list")
@one_line_errors
def list_scorers(config: ConfigOption = None, as_json: JsonFlag = False) -> None:
    """Show the scorers of the catalog."""
    catalog = catalog_from(config)
    definitions = [catalog.definition(scorer_id) for scorer_id in catalog.ids()]
    if as_json:
        rows = [
            {"id": d.id, "name": d.name, "direction": d.direction, "requires": d.requires, "description": d.description}
            for d in definitions
        ]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    table = Table(title="Scorers")
    for column in ("id", "name", "better", "needs", "description"):
        table.add_column(column, overflow="fold")
    for d in definitions:
        better = "lower" if d.direction == "lower_is_better" else "higher"
        table.add_row(d.id, d.name, better, ", ".join(d.requires), d.description)
    console.print(table)


@app.command("run")
@one_line_errors
def run_scorer(
    scorer: Annotated[str, typer.Argument(help="Scorer id (see `scorers list`)")],
    output: Annotated[str, typer.Option(help="The output to judge; @file reads a file (a .json file may hold chat messages)")],
    input: Annotated[Optional[str], typer.Option("--input", help="The user's input; @file reads a file")] = None,  # noqa: A002
    context: Annotated[Optional[list[str]], typer.Option("--context", help="A context piece; repeat for more; @file reads a file")] = None,
    ground_truth: Annotated[Optional[str], typer.Option("--ground-truth", help="The expected answer; @file reads a file")] = None,
    model: Annotated[Optional[str], typer.Option(help="Judge as provider/model, e.g. openai/gpt-4o-mini")] = None,
    base_url: Annotated[Optional[str], typer.Option(help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")] = None,
    mode: Annotated[Optional[str], typer.Option(help="Structured output: json_schema, tools, json or md_json")] = None,
    scale: Annotated[Optional[float], typer.Option(help="Maximum score (option `scale`)")] = None,
    option: Annotated[Optional[list[str]], typer.Option("--option", help="Scorer option NAME=VALUE; repeat for more")] = None,
    config: ConfigOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Score one output and print the score and the reason."""
    options = parse_options(option or [])
    if scale is not None:
        options["scale"] = scale
    if context:
        options["context"] = [str(read_value(piece)) for piece in context]
    scorer_object = catalog_from(config).create(scorer, model=model, options=options, base_url=base_url, mode=mode)  # type: ignore[arg-type]
    result = scorer_object.run(output=read_value(output), input=read_value(input), ground_truth=read_value(ground_truth))
    if as_json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        return
    better = "lower is better" if scorer_object.definition.direction == "lower_is_better" else "higher is better"
    console.print(f"[bold]{scorer_object.id}[/bold]: {result.score:g} ({better})")
    if result.reason:
        console.print(result.reason, markup=False, highlight=False, soft_wrap=True)


@app.command("preview")
@one_line_errors
def preview_prompts(
    scorer: Annotated[str, typer.Argument(help="Scorer id (see `scorers list`)")],
    output: Annotated[str, typer.Option(help="A sample output; @file reads a file (a .json file may hold chat messages)")],
    input: Annotated[Optional[str], typer.Option("--input", help="The user's input; @file reads a file")] = None,  # noqa: A002
    context: Annotated[Optional[list[str]], typer.Option("--context", help="A context piece; repeat for more; @file reads a file")] = None,
    ground_truth: Annotated[Optional[str], typer.Option("--ground-truth", help="The expected answer; @file reads a file")] = None,
    answer: Annotated[Optional[list[str]], typer.Option("--answer", help="STEP=ANSWER: the judge's answer for a step (JSON/YAML, or @file), to render the steps after it")] = None,
    option: Annotated[Optional[list[str]], typer.Option("--option", help="Scorer option NAME=VALUE; repeat for more")] = None,
    config: ConfigOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Show the exact prompts a scorer would send, without calling a judge."""
    options = parse_options(option or [])
    if context:
        options["context"] = [str(read_value(piece)) for piece in context]
    answers = {name: (read_value(value) if str(value).startswith("@") else value) for name, value in parse_options(answer or []).items()}
    catalog = catalog_from(config)
    shown = preview(catalog, scorer, read_value(output), input=read_value(input), ground_truth=read_value(ground_truth), answers=answers, options=options)
    if as_json:
        print(shown.model_dump_json(indent=2))
        return
    for prompt in shown.prompts:
        if prompt.system:
            console.print(Rule(f"{prompt.step} · system", align="left"))
            console.print(prompt.system, markup=False, highlight=False, soft_wrap=True)
        console.print(Rule(f"{prompt.step} · prompt", align="left"))
        console.print(prompt.prompt, markup=False, highlight=False, soft_wrap=True)
    console.print(Rule())
    if shown.needs_answer_for is not None:
        step = next(step for step in catalog.compiled(scorer).steps if step.id == shown.needs_answer_for)
        fields = list(step.answer_model.model_fields) if step.answer_model is not None else ["(free text)"]
        console.print(
            f"To render the steps after {step.id!r}, give its answer: --answer {step.id}='{{...}}' (fields: {', '.join(fields)})",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    elif shown.result is not None:
        console.print(f"score: {shown.result.score:g}", markup=False)
        if shown.result.reason:
            console.print(f"reason: {shown.result.reason}", markup=False, highlight=False, soft_wrap=True)

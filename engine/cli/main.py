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
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.rule import Rule
from rich.table import Table

from ..catalog import Catalog, builtin_catalog, load_scorers
from ..errors import ConfigError, ScorerError
from ..runs import EvalResult, ItemResult, default_run_name, run_evals
from ..scoring.preview import preview
from ..store import RunSummary, ScoreStats, SQLiteStore

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
    scorer: ScorerArgument,
    output: Annotated[Optional[str], typer.Option(help="The output to judge; @file reads a file (a .json file may hold chat messages)")] = None,
    input: InputOption = None,  # noqa: A002
    context: ContextOption = None,
    ground_truth: GroundTruthOption = None,
    model: Annotated[Optional[str], typer.Option(help="Judge as provider/model, e.g. openai/gpt-4o-mini")] = None,
    base_url: Annotated[Optional[str], typer.Option(help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")] = None,
    mode: Annotated[Optional[str], typer.Option(help="Structured output: json_schema, tools, json or md_json")] = None,
    scale: Annotated[Optional[float], typer.Option(help="Maximum score (option `scale`)")] = None,
    option: ScorerOptions = None,
    config: ConfigOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Score one output and print the score and the reason."""
    options = scorer_options(option, context)
    if scale is not None:
        options["scale"] = scale
    scorer_object = catalog_from(config).create(scorer, model=model, options=options, base_url=base_url, mode=mode)  # type: ignore[arg-type]
    result = scorer_object.run(output=read_value(output), input=read_value(input), ground_truth=read_value(ground_truth))
    if as_json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        return
    better = "lower is better" if scorer_object.plan.direction == "lower_is_better" else "higher is better"
    console.print(f"[bold]{scorer_object.id}[/bold]: {result.score:g} ({better})")
    if result.reason:
        console.print(result.reason, markup=False, highlight=False, soft_wrap=True)


@app.command("preview")
@one_line_errors
def preview_prompts(
    scorer: ScorerArgument,
    output: Annotated[Optional[str], typer.Option(help="A sample output; @file reads a file (a .json file may hold chat messages)")] = None,
    input: InputOption = None,  # noqa: A002
    context: ContextOption = None,
    ground_truth: GroundTruthOption = None,
    answer: Annotated[Optional[list[str]], typer.Option("--answer", help="STEP=ANSWER: the judge's answer for a step (JSON/YAML, or @file), to render the steps after it")] = None,
    option: ScorerOptions = None,
    config: ConfigOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Show the exact prompts a scorer would send, without calling a judge."""
    options = scorer_options(option, context)
    answers = {name: (read_value(value) if str(value).startswith("@") else value) for name, value in parse_options(answer or []).items()}
    catalog = catalog_from(config)
    shown = preview(catalog.plan(scorer), read_value(output), input=read_value(input), ground_truth=read_value(ground_truth), answers=answers, options=options)
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
        step = catalog.plan(scorer).step(shown.needs_answer_for)
        answer_model = getattr(step, "answer_model", None)
        fields = list(answer_model.model_fields) if answer_model is not None else ["(free text)"]
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


# --- batch evaluation and stored results ---------------------------------------------------

DEFAULT_STORE = Path(".scorers") / "results.sqlite"
StoreOption = Annotated[Path, typer.Option("--store", help="The results database (SQLite file)")]


def parse_thresholds(pairs: list[str]) -> dict[str, float]:
    thresholds: dict[str, float] = {}
    for pair in pairs:
        name, separator, raw = pair.partition("=")
        try:
            thresholds[name.strip()] = float(raw)
        except ValueError:
            separator = ""
        if not separator or not name.strip():
            raise ConfigError(f"--threshold {pair!r}: expected SCORER_ID=NUMBER, e.g. hallucination=0.2")
    return thresholds


def count_items(data: Path) -> int | None:
    """How many items a data file holds (for the progress bar), without keeping them."""
    try:
        if data.suffix == ".json":
            loaded = json.loads(data.read_text(encoding="utf-8"))
            return len(loaded) if isinstance(loaded, list) else None
        with data.open(encoding="utf-8") as handle:
            return sum(1 for line in handle if line.strip())
    except (OSError, ValueError):
        return None  # the run itself reports what is wrong with the file


def _number(value: float | None) -> str:
    return "-" if value is None else f"{round(value, 3):g}"


def _better(direction: str) -> str:
    return "lower" if direction == "lower_is_better" else "higher"


def summary_table(title: str, stats: list[ScoreStats]) -> Table:
    with_thresholds = any(getattr(item, "threshold", None) is not None for item in stats)
    columns = ["scorer", "better", "mean", "min", "max", "n", "errors"] + (["limit", "verdict"] if with_thresholds else [])
    table = Table(title=title)
    for column in columns:
        if column == "scorer":
            table.add_column(column, no_wrap=True, min_width=max(len(item.scorer_id) for item in stats) if stats else None)
        else:
            table.add_column(column, justify="left" if column in ("better", "verdict") else "right", no_wrap=True)
    for item in stats:
        errors_cell = f"[red]{item.errors}[/red]" if item.errors else "0"
        row = [item.scorer_id, _better(item.direction), _number(item.mean), _number(item.min), _number(item.max), str(item.count), errors_cell]
        if with_thresholds:
            passed = getattr(item, "passed", None)
            verdict = "" if passed is None else ("[green]pass[/green]" if passed else "[red]FAIL[/red]")
            row += [_number(getattr(item, "threshold", None)), verdict]
        table.add_row(*row)
    return table


def _print_eval(result: EvalResult, store: Path) -> None:
    counts = result.counts
    console.print(summary_table(f"run {result.run}: {counts.items} items", list(result.summary.values())))
    for summary in result.summary.values():
        if summary.agreement is not None:
            agreement = summary.agreement
            console.print(
                f"{summary.scorer_id} against human scores ({agreement.labelled} labelled items): "
                f"rank correlation {'n/a (the scores do not vary)' if agreement.rank_correlation is None else _number(agreement.rank_correlation)} (1 = same order), "
                f"mean absolute error {_number(agreement.mean_abs_error)}",
                highlight=False,
            )
    if counts.resumed:
        console.print(f"{counts.resumed} item(s) were already scored in this run and loaded from the store.")
    for error in result.errors[:5]:
        where = f"item {error.index}" + (f" ({error.item_id})" if error.item_id else "") + (f" {error.scorer_id}" if error.scorer_id else "")
        console.print(f"[red]{error.stage} error[/red] {where}: {error.error}", highlight=False)
    if len(result.errors) > 5:
        console.print(f"... and {len(result.errors) - 5} more errors")
    if result.errors:
        console.print(f"Failed items are scored again when you rerun with --run {result.run}.", highlight=False)
    console.print(f"Saved as run [bold]{result.run}[/bold] in {store} (see `scorers results --run {result.run}`).", highlight=False)


@app.command("eval")
@one_line_errors
def eval_command(
    data: Annotated[Path, typer.Argument(help="Items as JSONL: input, and output, context, ground_truth, id, metadata")],
    scorer: Annotated[list[str], typer.Option("--scorer", help="A scorer id; repeat for more")],
    model: Annotated[Optional[str], typer.Option(help="Judge as provider/model, e.g. openai/gpt-4o-mini")] = None,
    base_url: Annotated[Optional[str], typer.Option(help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")] = None,
    mode: Annotated[Optional[str], typer.Option(help="Structured output: json_schema, tools, json or md_json")] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Scorer runs in flight at once")] = 8,
    run: Annotated[Optional[str], typer.Option("--run", help="Run name; an existing run is resumed (default: a new one)")] = None,
    store: StoreOption = DEFAULT_STORE,
    threshold: Annotated[Optional[list[str]], typer.Option("--threshold", help="SCORER_ID=VALUE: fail (exit 1) when the mean is worse")] = None,
    config: ConfigOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Score every item of a data set; saved as it goes, resumable, summarised at the end."""
    logging.getLogger("engine.evals").addHandler(logging.NullHandler())
    logging.getLogger("engine.evals").propagate = False  # errors are summarised below instead
    catalog = catalog_from(config)
    scorers = [catalog.create(scorer_id, model=model, base_url=base_url, mode=mode) for scorer_id in scorer]  # type: ignore[arg-type]
    thresholds = parse_thresholds(threshold or [])
    if not data.is_file():
        raise ConfigError(f"no data file {data}")
    name = run or default_run_name(data.stem)
    progress = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[failed]}"),
        TimeElapsedColumn(), TimeRemainingColumn(), console=errors, disable=not errors.is_terminal,
    )  # fmt: skip
    finished = {"items": 0, "failed": 0}

    def advance(item: ItemResult) -> None:
        finished["items"] += 1
        finished["failed"] += not item.ok
        failed = f"[red]{finished['failed']} failed[/red]" if finished["failed"] else ""
        progress.update(task, advance=1, failed=failed)

    task = progress.add_task(name, total=count_items(data), failed="")
    try:
        with progress:
            result = run_evals(
                data, scorers, on_item_complete=advance, concurrency=concurrency, run=name, store=store,
                thresholds=thresholds, keep_results=False, meta={"data": str(data)},
            )  # fmt: skip
    except KeyboardInterrupt:
        errors.print(
            f"interrupted: {finished['items']} item(s) of run {name} are saved in {store}; "
            f"run the same command with --run {name} to score the rest",
            markup=False, highlight=False, soft_wrap=True,
        )  # fmt: skip
        raise typer.Exit(130) from None
    if as_json:
        print(json.dumps(result.model_dump(mode="json", exclude={"items"}), indent=2, ensure_ascii=False))
    else:
        _print_eval(result, store)
    nothing_scored = [item.scorer_id for item in result.summary.values() if item.count == 0]
    if result.passed is False or nothing_scored:
        if nothing_scored and not as_json:
            errors.print(f"error: nothing was scored by {', '.join(nothing_scored)}", markup=False, highlight=False)
        raise typer.Exit(1)


def _open_existing(store: Path) -> SQLiteStore:
    if not store.is_file():
        raise ConfigError(f"no results store at {store} (`scorers eval` creates it; --store picks another)")
    return SQLiteStore(store)


def _run_line(run: RunSummary) -> str:
    return "; ".join(f"{item.scorer_id} {_number(item.mean)} (n={item.count}, errors={item.errors})" for item in run.scorers)


@app.command("results")
@one_line_errors
def results_command(
    run: Annotated[Optional[str], typer.Option("--run", help="Show one run: its summary and worst items")] = None,
    store: StoreOption = DEFAULT_STORE,
    worst: Annotated[int, typer.Option(min=0, help="How many worst items to show per scorer (with --run)")] = 5,
    as_json: JsonFlag = False,
) -> None:
    """List the stored runs and their summaries, or one run in detail."""
    with _open_existing(store) as results:
        if run is None:
            runs = results.runs()
            if as_json:
                print(json.dumps([item.model_dump(mode="json") for item in runs], indent=2, ensure_ascii=False))
                return
            table = Table(title=f"Runs in {store}")
            for column in ("run", "source", "status", "items", "updated", "scores (mean)"):
                table.add_column(column, overflow="fold")
            for item in runs:
                updated = item.updated_at.astimezone().strftime("%Y-%m-%d %H:%M")
                table.add_row(item.name, item.source, item.status, str(item.items), updated, _run_line(item))
            console.print(table)
            return
        found = results.get_run(run)
        if found is None:
            known = ", ".join(item.name for item in results.runs()[:10]) or "none"
            raise ConfigError(f"no run named {run!r} in {store} (runs: {known})")
        stats = results.summary(run)
        worst_items = {item.scorer_id: results.query(run=run, scorer=item.scorer_id, errors=False, worst_first=True, limit=worst) for item in stats}
        failures = results.query(run=run, errors=True, limit=20)
        if as_json:
            payload = {
                "run": found.model_dump(mode="json"),
                "scorers": [item.model_dump(mode="json") for item in stats],
                "worst": {scorer_id: [record.model_dump(mode="json") for record in records] for scorer_id, records in worst_items.items()},
                "errors": [record.model_dump(mode="json", include={"item_id", "item_index", "scorer_id", "error_stage", "error"}) for record in failures],
            }
            print(json.dumps(payload, indent=2, ensure_ascii=False))
            return
        console.print(summary_table(f"run {run} ({found.source}, {found.status})", stats))
        for scorer_id, records in worst_items.items():
            if not records:
                continue
            table = Table(title=f"worst {scorer_id} items")
            for column in ("item", "score", "reason"):
                table.add_column(column, overflow="fold")
            for record in records:
                table.add_row(record.item_id, _number(record.score), (record.reason or "")[:200])
            console.print(table)
        for record in failures:
            console.print(f"[red]{record.error_stage} error[/red] {record.item_id} {record.scorer_id}: {record.error}", highlight=False)

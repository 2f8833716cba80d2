"""`scorers align`: the scorer learns from people's labels and changes only on evidence."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from ..errors import ConfigError
from ..judge import ResponseCache
from ..runs.align import METRICS, AlignResult, align
from ..runs.labels.golden import queue_data, queue_name
from .agreement_tables import print_comparison
from .app import app, console, errors
from .common import (
    DEFAULT_STORE,
    EXIT_FAILED,
    EXIT_USAGE,
    ConfigOption,
    JsonFlag,
    NoCacheFlag,
    StoreOption,
    catalog_from,
    existing_store,
    fixed_in_setup,
    one_line_errors,
    print_json,
)
from .options import JudgeSetup, flags
from .tables import figure
from .tuning_commands import progress_bar


def _print_trials(result: AlignResult) -> None:
    if not result.trials:
        return
    table = Table(title=f"candidates on dev ({result.split.dev} items), by {result.metric}; baseline {figure(result.baseline_dev)}", title_justify="left")
    for column in ("trial", "change", result.metric, "kept"):
        table.add_column(column, overflow="fold")
    for trial in result.trials:
        table.add_row(trial.name, trial.change, figure(trial.dev), "yes" if trial.kept else "no")
    console.print(table)


@app.command("align")
@one_line_errors
@flags(JudgeSetup)
def align_command(
    data: Annotated[Path, typer.Argument(help="Labelled items as JSONL (with `expected`), or queue:NAME for a review queue's golden set")],
    scorer: Annotated[str, typer.Option("--scorer", help="The scorer id to align")],
    setup: JudgeSetup,
    metric: Annotated[str, typer.Option(help="What to improve: kappa, balanced_accuracy, f1 or mae")] = "kappa",
    max_cost: Annotated[Optional[float], typer.Option("--max-cost", min=0.000001, help="Stop (resumably) once this many US dollars are spent")] = None,
    trials: Annotated[int, typer.Option("--trials", min=1, help="Candidates judged on dev, at most")] = 8,
    optimizer_model: Annotated[Optional[str], typer.Option("--optimizer-model", help="The model proposing instruction edits (default: the judge's)")] = None,
    output: Annotated[Optional[Path], typer.Option("-o", "--output", help="Where the accepted variant catalog goes (default variants/SCORER-aligned)")] = None,
    config: ConfigOption = None,
    seed: Annotated[int, typer.Option(help="Seed of the train/dev/test split")] = 0,
    group_by: Annotated[
        Optional[str], typer.Option("--group-by", help="A metadata field whose items stay on one side of the split (default: pair, when items carry it)")
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Scorer runs in flight at once")] = 8,
    run: Annotated[Optional[str], typer.Option("--run", help="Name prefix of align's stored runs; the same name resumes (default align-SCORER-DATA-sSEED)")] = None,
    store: StoreOption = DEFAULT_STORE,
    no_cache: NoCacheFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Learn from labelled items: try worked examples, an instruction rewrite and the threshold on dev; keep the best only if test shows it beyond noise."""
    if metric not in METRICS:
        raise ConfigError(f"--metric must be one of {', '.join(METRICS)}, got {metric!r}")
    queue = queue_name(data)
    items: Path | list[Any] = data
    if queue is not None:
        items = queue_data(existing_store(store), queue)
        run = run or f"align-{scorer}-{queue}-s{seed}"
    elif not data.is_file():
        raise ConfigError(f"no data file {data}")

    def say(line: str) -> None:
        if not as_json:
            errors.print(line, markup=False, highlight=False, soft_wrap=True)

    result = align(
        items, scorer, group_by=group_by, catalog=catalog_from(config), metric=metric, trials=trials, max_cost=max_cost, optimizer_model=optimizer_model,
        output_dir=output, run=run, store=store, seed=seed, concurrency=concurrency, on_event=say, progress=progress_bar,
        cache=False if no_cache else ResponseCache.of(True) or False,
        judge=setup.judge(),
    )
    if as_json:
        print_json(result.model_dump(mode="json"))
    else:
        _print_trials(result)
        if result.test is not None:
            console.print(f"On the untouched test split ({result.split.test} items), the scorer as it was (A) against the best candidate (B):", highlight=False)
            print_comparison(console, result.test)
        console.print(result.verdict, highlight=False, soft_wrap=True)
        console.print(f"Stored runs: {', '.join(result.runs)}; spent ${result.cost_usd:.4f}.", highlight=False, soft_wrap=True)
    if result.stopped:
        errors.print(f"error: {result.stopped}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_USAGE if fixed_in_setup(result.stopped_by_kind) else EXIT_FAILED)

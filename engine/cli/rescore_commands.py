"""`scorers rescore` (stored items scored again by another scorer or version, as a new run)
and `scorers pairwise` (two outputs per input, judged in both orders)."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape
from rich.table import Table

from ..errors import ConfigError
from ..judge import ResponseCache
from ..runs.pairwise import PairwiseResult, pairs_from_items, pairs_from_runs, run_pairwise
from ..runs.stored.rescoring import rescore
from ..store import open_store, redact_url
from .app import app, console, errors
from .common import (
    DEFAULT_STORE,
    ConfigOption,
    JsonFlag,
    MaxCostOption,
    MaxErrorsOption,
    MinCoverageOption,
    ConcurrencyOption,
    NoCacheFlag,
    ScorerOptions,
    StoreOption,
    catalog_from,
    existing_store,
    fail_unless,
    one_line_errors,
    parse_options,
    print_json,
)
from .options import JudgeSetup, flags
from .tables import figure, summary_table

PairsInFlightOption = Annotated[int, typer.Option(min=1, help="Judgements in flight at once")]


@app.command("rescore")
@one_line_errors
@flags(JudgeSetup)
def rescore_command(
    run: Annotated[str, typer.Option("--run", help="The stored run (batch or live) whose items to score again")],
    scorer: Annotated[str, typer.Option("--scorer", help="The scorer to score them with (of --config, else built-in)")],
    setup: JudgeSetup,
    config: ConfigOption = None,
    since: Annotated[Optional[str], typer.Option("--since", help="Only items stored in this span: 90m, 24h, 7d")] = None,
    from_scorer: Annotated[Optional[str], typer.Option("--from-scorer", help="Only the items this scorer of --run judged")] = None,
    name: Annotated[Optional[str], typer.Option("--as", help="The new run's name (default: RUN-SCORER-time)")] = None,
    option: ScorerOptions = None,
    store: StoreOption = DEFAULT_STORE,
    concurrency: ConcurrencyOption = 8,
    no_cache: NoCacheFlag = False,
    max_errors: MaxErrorsOption = "0",
    min_coverage: MinCoverageOption = 1.0,
    max_cost: MaxCostOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Score the items a run stored (output, input, context, ground truth, metadata) with
    another scorer, or another version of it, as a new run; then compare the two with
    `scorers results --run NEW --compare RUN`."""
    created = catalog_from(config).create(scorer, options=parse_options(option or []), judge=setup.judge())
    with closing(existing_store(store, writing=True)) as results:
        outcome = rescore(
            results, run, created, new_run=name, since=since, from_scorer=from_scorer, concurrency=concurrency,
            cache=False if no_cache else ResponseCache.of(True), max_errors=max_errors, min_coverage=min_coverage, max_cost=max_cost,
        )
        if as_json:
            print_json(outcome.model_dump(mode="json", exclude={"result": {"items"}}))
            fail_unless(outcome.verdict)
            return
        console.print(summary_table(f"run {outcome.run}: {outcome.items} item(s) of {run} re-scored", results.summary(outcome.run)))
    if outcome.skipped:
        errors.print(f"{len(outcome.skipped)} stored item(s) not re-scored:", markup=False, highlight=False)
        for skipped in outcome.skipped[:10]:
            errors.print(f"  {skipped.item_id}: {skipped.reason}", markup=False, highlight=False)
    errors.print(f"what changed: scorers results --run {outcome.run} --compare {run} --store {redact_url(store)}", markup=False, highlight=False)
    fail_unless(outcome.verdict)


def print_pairwise(result: PairwiseResult) -> None:
    summary, labels = result.summary, result.labels
    console.print(f"{result.scorer_id}: A = {labels['a']}, B = {labels['b']}, {summary.pairs} pair(s) judged in both orders", highlight=False)
    table = Table()
    for column in ("", "pairs", "share", "95% interval"):
        table.add_column(column, justify="left" if not column else "right")
    for word, count, rate in (("A wins", summary.a_wins, summary.a_win_rate), ("B wins", summary.b_wins, summary.b_win_rate), ("ties", summary.ties, summary.tie_rate)):
        interval = "-" if rate.low is None else escape(f"[{figure(rate.low)}, {figure(rate.high)}]")
        table.add_row(word, str(count), figure(rate.value), interval)
    console.print(table)
    console.print(
        f"order-inconsistent pairs (counted as ties): {summary.inconsistent}; failed: {summary.errors}"
        + (f"; not scorable: {summary.not_scorable}" if summary.not_scorable else "")
        + (f"; not judged (the budget): {summary.not_judged}" if summary.not_judged else "")
        + (f"; saved as run {result.run}" if result.run else ""),
        highlight=False,
    )
    if result.reused:
        console.print(f"{result.reused} pair(s) were judged by an earlier invocation of run {result.run} and read back.", highlight=False)
    if result.stopped:
        rest = f"rerun with --as {result.run} to judge the rest" if result.run else "give --as RUN to keep what is judged and resume it"
        console.print(f"[yellow]stopped early:[/yellow] {escape(result.stopped)}; {summary.not_judged} pair(s) not judged; {rest}.", highlight=False)
    for pair in result.pairs:
        if pair.consistent is False:
            verdicts = ", ".join(f"{order.first.upper()} first: {order.winner}" for order in pair.orders)
            console.print(f"  inconsistent {pair.item_id}: {verdicts}", highlight=False)
        elif pair.error is not None:
            console.print(f"  [red]failed[/red] {pair.item_id}: {escape(pair.error)}", highlight=False)


@app.command("pairwise")
@one_line_errors
@flags(JudgeSetup)
def pairwise_command(
    scorer: Annotated[str, typer.Option("--scorer", help="A pairwise scorer, e.g. preference")],
    setup: JudgeSetup,
    data: Annotated[Optional[Path], typer.Argument(help="Items as JSONL, each with outputs: {a: ..., b: ...}")] = None,
    run: Annotated[Optional[list[str]], typer.Option("--run", help="Two stored runs, A then B: their outputs paired by item id")] = None,
    config: ConfigOption = None,
    option: ScorerOptions = None,
    store: StoreOption = DEFAULT_STORE,
    save: Annotated[Optional[str], typer.Option("--as", help="Save the verdicts as this run of --store")] = None,
    concurrency: PairsInFlightOption = 4,
    max_errors: MaxErrorsOption = "0",
    min_coverage: MinCoverageOption = 1.0,
    max_cost: MaxCostOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Which of two outputs per input is better: each pair judged in both orders, win rates
    with intervals, ties, and the pairs whose verdict changed with the order. Run again with
    the same --as, it judges only the pairs that run has not judged yet."""
    if (data is None) == (not run):
        raise ConfigError("give a data file (items with outputs: {a, b}) or --run BEFORE --run AFTER, not both")
    if run and len(run) != 2:
        raise ConfigError(f"--run: give exactly two runs (A then B), got {len(run)}")
    created = catalog_from(config).create(scorer, options=parse_options(option or []), judge=setup.judge())
    opened = existing_store(store, writing=bool(save)) if run else open_store(store) if save else None
    try:
        if run:
            assert opened is not None
            pairs, labels = pairs_from_runs(opened, run[0], run[1]), (run[0], run[1])
        else:
            assert data is not None
            pairs, labels = pairs_from_items(data), ("a", "b")
        result = run_pairwise(
            pairs, created, labels=labels, store=opened if save else None, run=save, concurrency=concurrency, max_errors=max_errors,
            min_coverage=min_coverage, max_cost=max_cost,
        )
    finally:
        if opened is not None:
            opened.close()
    if as_json:
        print_json(result.model_dump(mode="json"))
    else:
        print_pairwise(result)
    fail_unless(result.verdict)


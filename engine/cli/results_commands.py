"""`scorers results`: stored runs and their summaries, or one run in detail."""

from __future__ import annotations

import dataclasses
import sys
from contextlib import closing
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from ..runs.measures.confidence import confidence_of
from ..runs.measures.confidence import shown as shown_confidence
from ..runs.measures.confidence import sure_shown
from ..errors import ConfigError
from ..formatting import to_json
from ..runs import where_item
from ..runs.measures.stats import usage_cost
from ..sync import run_sync
from ..runs.results import calls_line, calls_sent
from ..runs.stored.reading import (
    stored_verdict,
    RunExport,
    compare_runs,
    existing_run,
    export_records,
    run_agreement,
    run_spread,
)
from ..runs.stored.reasons import reason_on_demand, reason_step
from ..store import (
    ResultRecord,
    RunSummary,
    ScorerUsage,
    Store,
    redact_url,
)
from .agreement_tables import print_agreement, print_comparison
from .change_tables import print_run_changes
from .app import app, console, errors
from .common import (
    DEFAULT_STORE,
    ConfigOption,
    JsonFlag,
    existing_store,
    StoreOption,
    catalog_from,
    one_line_errors,
    parse_options,
    print_json,
)
from .options import ScorerSetup, flags
from .tables import UsageRow, coverage, figure, summary_table, usage_table


def usage_rows(usages: list[ScorerUsage]) -> list[UsageRow]:
    """Stored token counts, priced with today's price table (Batch API calls at its price)."""
    return [
        UsageRow(item.scorer_id, item.model, item.judge_calls, item.cached_calls, item.tokens(), usage_cost(item), item.batch)
        for item in usages
    ]




def _export(results: Store, run: str, form: str, output: Path | None) -> None:
    existing_run(results, run)
    records = RunExport(results, run)
    chunks = export_records(records, form, records.step_ids() if form == "csv" else None)
    if output is None:
        for chunk in chunks:
            sys.stdout.write(chunk)
        return
    with output.open("w", encoding="utf-8", newline="") as handle:
        handle.writelines(chunks)
    errors.print(f"wrote {records.count} record(s) of run {run} to {output}", markup=False, highlight=False)


def _run_line(run: RunSummary) -> str:
    return "; ".join(f"{item.scorer_id} {figure(item.mean)} (scored {coverage(item)}, errors {item.errors})" for item in run.scorers)


def _last_invocation(meta: dict[str, object]) -> str | None:
    last = meta.get("last_invocation")
    if not isinstance(last, dict):
        return None
    line = f"last invocation ({last.get('status')}): {last.get('reused', 0)} result(s) reused, {last.get('judged', 0)} judged"
    if last.get("stopped_by"):
        line += f"; stopped by: {last['stopped_by']}"
    return line


@app.command("results")
@one_line_errors
@flags(ScorerSetup)
def results_command(
    setup: ScorerSetup,
    run: Annotated[Optional[str], typer.Option("--run", help="Show one run: its summary and worst items")] = None,
    store: StoreOption = DEFAULT_STORE,
    worst: Annotated[int, typer.Option(min=0, help="How many worst items to show per scorer (with --run)")] = 5,
    threshold: Annotated[
        Optional[list[str]], typer.Option("--threshold", help="SCORER=VALUE: the pass mark for the pass rate (default: the run's own thresholds)")
    ] = None,
    compare: Annotated[Optional[str], typer.Option("--compare", help="Another run: compare its agreement with --run's, item by item")] = None,
    export: Annotated[Optional[str], typer.Option("--format", help="Export every item of --run: csv, jsonl or json")] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the export to this file (default: stdout)")] = None,
    item: Annotated[
        Optional[str],
        typer.Option("--item", help="Open one item of --run: each scorer's score, reason and answers; a reason the run left out is asked now"),
    ] = None,
    config: ConfigOption = None,
    as_json: JsonFlag = False,
) -> None:
    """List the stored runs and their summaries, or one run in detail (with the median, the
    95th percentile and the pass rate of each scorer beside its mean)."""
    if (compare is not None or export is not None or item is not None) and run is None:
        raise ConfigError("--compare, --format and --item need --run NAME")
    opened = existing_store(store)
    store = redact_url(store)  # named in the messages below
    with closing(opened) as results:
        if run is None:
            _show_runs(results, store, as_json)
        elif export is not None:
            _export(results, run, export, output)
        elif compare is not None:
            _show_comparison(results, run, compare, as_json)
        elif item is not None:
            _show_item(results, run, item, setup, config, as_json)
        else:
            _show_run(results, run, store, worst, threshold or [], as_json)


def _show_runs(results: Store, store: str, as_json: bool) -> None:
    runs = results.runs()
    if as_json:
        print_json([item.model_dump(mode="json") for item in runs])
        return
    table = Table(title=f"Runs in {store}")
    for column in ("run", "source", "status", "items", "updated", "scores (mean)"):
        table.add_column(column, overflow="fold")
    for item in runs:
        updated = item.updated_at.astimezone().strftime("%Y-%m-%d %H:%M")
        table.add_row(item.name, item.source, item.status, str(item.items), updated, _run_line(item))
    console.print(table)


def _show_comparison(results: Store, run: str, compare: str, as_json: bool) -> None:
    comparisons = compare_runs(results, run, compare)
    if as_json:
        print_json([comparison.model_dump(mode="json") for comparison in comparisons])
        return
    for comparison in comparisons:
        if comparison.items:
            print_comparison(console, comparison)
        else:
            console.print(f"{comparison.baseline} and {comparison.variant} share no labelled item to measure agreement on.", highlight=False)
    print_run_changes(console, results, run, compare)


def _show_run(results: Store, run: str, store: str, worst: int, threshold: list[str], as_json: bool) -> None:
    """One run: its summary per scorer with spreads and pass rates, usage and cost, agreement
    with labels, the worst items and the errors."""
    found = results.get_run(run)
    if found is None:
        known = ", ".join(item.name for item in results.runs()[:10]) or "none"
        raise ConfigError(f"no run named {run!r} in {store} (runs: {known})")
    stats = results.summary(run)
    given = _thresholds(threshold)
    limits = {**(found.meta.get("thresholds") or {}), **given}
    spreads = {item.scorer_id: run_spread(results, run, item.scorer_id, item.direction, limits.get(item.scorer_id)) for item in stats}
    worst_items = {item.scorer_id: results.query(run=run, scorer=item.scorer_id, errors=False, worst_first=True, limit=worst) for item in stats}
    failures = results.query(run=run, errors=True, limit=20)
    usage = usage_rows(results.usage(run))
    verdict = stored_verdict(results, found) if found.kind != "live" else None
    if as_json:
        payload = {
            "run": found.model_dump(mode="json"),
            "scorers": [{**item.model_dump(mode="json"), **spreads[item.scorer_id].model_dump(mode="json")} for item in stats],
            "usage": [
                {"scorer_id": row.scorer_id, "model": row.model, "judge_calls": row.judge_calls, "cached_calls": row.cached_calls,
                 **row.usage.model_dump(), "cost_usd": row.cost_usd, "batch_api": row.batch}
                for row in usage
            ],
            "worst": {scorer_id: [record.model_dump(mode="json") for record in records] for scorer_id, records in worst_items.items()},
            "errors": [record.model_dump(mode="json", include={"item_id", "item_index", "scorer_id", "error_stage", "error"}) for record in failures],
            "last_invocation": found.meta.get("last_invocation"),
            "judge_calls_sent": calls_sent(found),
            "verdict": verdict.model_dump(mode="json") if verdict is not None else None,
        }
        print_json(payload)
        return
    console.print(summary_table(f"run {run} ({found.kind}, {found.status})", stats, spreads))
    if verdict is not None:
        said = "passed" if verdict.passed else f"did not pass: {'; '.join(verdict.reasons)}"
        console.print(f"verdict: {said}", markup=False, highlight=False, soft_wrap=True)
    last = _last_invocation(found.meta)
    if last is not None:
        console.print(last, markup=False, highlight=False)
    if not limits:
        console.print("pass rate: give --threshold SCORER=VALUE (or run `scorers eval` with thresholds)", style="dim")
    sent = calls_sent(found)
    if sent or any(row.judge_calls or row.cached_calls for row in usage):
        console.print(usage_table("judge calls, tokens and estimated cost (today's prices)", usage))
        console.print(calls_line(sent, sum(row.judge_calls for row in usage)), markup=False, highlight=False)
    for scorer in stats:
        agreement = run_agreement(results, found, scorer.scorer_id, scorer.direction, given.get(scorer.scorer_id), shown=worst)
        if agreement is not None:
            print_agreement(console, scorer.scorer_id, scorer.direction, agreement, worst=worst)
    for scorer_id, records in worst_items.items():
        if not records:
            continue
        table = Table(title=f"worst {scorer_id} items")
        sure = any(confidence_of(record.steps) is not None for record in records)  # a column only where the judge gave any
        for column in ("item", "score", *(["confidence"] if sure else []), "reason"):
            table.add_column(column, overflow="fold")
        for record in records:
            confidence = [sure_shown(record.steps)] if sure else []
            table.add_row(record.item_id, figure(record.score), *confidence, (record.reason or _left_out(record, run))[:200])
        console.print(table)
    for record in failures:
        where = where_item(record.item_index, record.item_id) if record.item_index is not None else record.item_id
        console.print(f"[red]{record.error_stage} error[/red] {where} {record.scorer_id}: {record.error}", highlight=False)


def _left_out(record: ResultRecord, run: str) -> str:
    """What a record shows for a reason its run did not ask for."""
    step = reason_step(record)
    if step is None:
        return ""
    return f"(not asked: {record.steps[step].not_asked}; `scorers results --run {run} --item {record.item_id}` asks for it)"


def _show_item(results: Store, run: str, item_id: str, setup: ScorerSetup, config: Path | None, as_json: bool) -> None:
    """One stored item: each scorer's score, reason and answers. A reason its run left out
    (`--reasons on-demand`, or a passing item's under `failing`) is asked now, of the scorer
    that scored it, set up by --config, --model and --option as the run was, and saved."""
    existing_run(results, run)
    records = results.item_records(run, item_id)
    if not records:
        raise ConfigError(f"run {run!r} has no item {item_id!r}")
    shown = []
    for record in records:
        if reason_step(record) is not None and record.score is not None:
            scorer = dataclasses.replace(setup, model=setup.model or ([record.model] if record.model else None)).create(catalog_from(config), record.scorer_id)
            record = run_sync(reason_on_demand(results, record, scorer))
        shown.append(record)
    if as_json:
        print_json([record.model_dump(mode="json") for record in shown])
        return
    for record in shown:
        outcome = figure(record.score) if record.score is not None else (record.error or record.not_scorable or "-")
        sure = "" if confidence_of(record.steps) is None else f", {sure_shown(record.steps)}"
        console.print(f"[bold]{record.scorer_id}[/bold] ({record.model}): {outcome}{sure}", highlight=False)
        if record.reason:
            console.print(record.reason, markup=False, highlight=False, soft_wrap=True)
        for step in record.steps.values():
            if step.kind == "llm" and not step.skipped:
                console.print(f"  {step.id}: {to_json(step.result)}", markup=False, highlight=False, soft_wrap=True)
                for weighed in step.probabilities or ():
                    odds = ", ".join(f"{to_json(value)} {shown_confidence(probability)}" for value, probability in zip(weighed.values, weighed.probabilities))
                    console.print(f"    {weighed.field}: {odds} ({weighed.source})", markup=False, highlight=False, soft_wrap=True)


def _thresholds(pairs: list[str]) -> dict[str, float]:
    limits = {}
    for name, value in parse_options(pairs).items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"--threshold {name}={value}: the threshold must be a number")
        limits[name] = float(value)
    return limits


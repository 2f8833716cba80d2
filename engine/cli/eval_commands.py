"""`scorers eval`: a data set through one or more scorers, saved as it goes."""

from __future__ import annotations

import json
import shlex
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.markup import escape
from rich.text import Text

from ..catalog import Catalog
from ..errors import ConfigError
from ..judge import ResponseCache, throttling
from ..runs import (
    BatchProgress,
    Estimate,
    EvalResult,
    ItemResult,
    default_run_name,
    estimate_evals,
    run_batch_api,
    run_evals,
    where_item,
)
from ..runs.results import JuryAgreement, calls_line
from ..runs.verdict import Standard
from ..scoring import AnyScorer
from ..store import redact_url, store_shares_work
from . import tuning_commands as tuning  # the tuner's variants of this command
from .agreement_tables import agreement_line, cascade_line, print_agreement
from .gate_tables import print_gates
from .app import app, console, errors
from .options import ScorerSetup, Selection, flags
from .common import (
    DEFAULT_STORE,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    ConcurrencyOption,
    ConfigOption,
    JsonFlag,
    MaxErrorsOption,
    MinCoverageOption,
    NoCacheFlag,
    ReasonsOption,
    StoreOption,
    catalog_from,
    count_items,
    one_line_errors,
    parse_thresholds,
    fixed_in_setup,
    print_json,
    reasons_policy,
)
from .tables import UsageRow, figure, money, summary_table, usage_table


class ThrottleColumn(ProgressColumn):
    """Says, while it lasts, that the judge's provider is holding the run back."""

    def render(self, task: Task) -> Text:
        notes = []
        for stats in throttling():
            if stats.paused_for > 0:
                notes.append(f"{stats.model}: rate limited, waiting {stats.paused_for:.0f}s")
            elif stats.allowed_in_flight is not None:
                notes.append(f"{stats.model}: throttled to {stats.allowed_in_flight} calls at once")
        return Text("; ".join(notes), style="yellow")

#: Without a terminal (a CI log), a progress line at most this often.
PROGRESS_EVERY_SECONDS = 10.0
#: ... and at least this often, also while no item finishes.
WAITING_LINE_EVERY_SECONDS = 10.0


def _print_estimate(estimate: Estimate, data: Path) -> None:
    rows = [
        UsageRow(item.scorer_id, item.model, item.calls, item.cached_calls, item.usage, item.cost_usd, estimate.batch_api)
        for item in estimate.scorers
    ]
    console.print(usage_table(f"estimate for {data}: {estimate.items} items (no judge was called)", rows))
    total = "-" if estimate.cost_usd is None else money(estimate.cost_usd)
    if estimate.cost_low_usd is not None and estimate.cost_high_usd is not None:
        total += f" (from {money(estimate.cost_low_usd)} to {money(estimate.cost_high_usd)})"
    cached = sum(item.cached_calls for item in estimate.scorers)
    console.print(
        f"About {sum(item.calls for item in estimate.scorers)} judge calls, {total} in all; {cached} question(s) answered by "
        "the response cache, free. Prompts are rendered exactly up to the first question the cache cannot answer; later "
        "steps are assumed as long; about 4 characters per token.",
        highlight=False,
    )
    for item in estimate.scorers:
        lengths = ", ".join(
            f"{length.step} {length.typical} ({length.low}-{length.high}; "
            + (f"median of {length.seen} cached answers)" if length.seen else "default)")
            for length in item.answers
        )
        if lengths:
            console.print(f"{item.scorer_id} ({item.model}) answer tokens: {lengths}", highlight=False)
        if item.not_rendered:
            console.print(f"{item.scorer_id}: {item.not_rendered} item(s) could not be rendered (the run will say why).", highlight=False)
    if estimate.unreadable:
        console.print(f"{estimate.unreadable} item(s) are unreadable.", highlight=False)


class _PlainProgress:
    """Progress for a log without a terminal: one line on stderr every few seconds, also
    while no item finishes (a slow or hanging judge), so a CI log never looks stuck."""

    def __init__(self, name: str, total: int | None) -> None:
        self.name = name
        self.total = total
        self.started = self.last = time.monotonic()
        self.done = self.failed = 0
        self._lock = threading.Lock()
        self._ended = threading.Event()

    def update(self, done: int, failed: int, final: bool = False) -> None:
        with self._lock:
            self.done, self.failed = done, failed
            now = time.monotonic()
            if not final and now - self.last < PROGRESS_EVERY_SECONDS:
                return
            self._line(now)

    def _line(self, now: float, waiting: str = "") -> None:
        self.last = now
        of = f"/{self.total}" if self.total is not None else ""
        line = f"{self.name}: {self.done}{of} items, {self.failed} failed, {now - self.started:.0f}s{waiting}"
        errors.print(line, markup=False, highlight=False)

    @contextmanager
    def ticking(self) -> Iterator[None]:
        """While the run lasts, a line every WAITING_LINE_EVERY_SECONDS in which no item finished."""
        ticker = threading.Thread(target=self._tick, name="progress-line", daemon=True)
        ticker.start()
        try:
            yield
        finally:
            self._ended.set()
            ticker.join()

    def _tick(self) -> None:
        while not self._ended.wait(WAITING_LINE_EVERY_SECONDS):
            with self._lock:
                now = time.monotonic()
                if now - self.last >= WAITING_LINE_EVERY_SECONDS:
                    self._line(now, ", waiting for answers")


def _resume_command(data: Path, run: str, options: dict[str, object]) -> str:
    """The command that continues run `run` with the same settings."""
    arguments = ["scorers", "eval", str(data)]
    for flag, value in options.items():
        for one in value if isinstance(value, list) else [value]:
            if one is not None and one is not False:
                arguments += [flag] if one is True else [flag, str(one)]
    return shlex.join([*arguments, "--run", run])


def _print_eval(result: EvalResult, store: str, total: int | None, batch_api: bool = False) -> None:
    counts = result.counts
    items = f"{counts.items} of {total} items" if total is not None and total != counts.items else f"{counts.items} items"
    console.print(summary_table(f"run {result.run} ({result.status}): {items}", list(result.summary.values())))
    rows = [UsageRow(item.scorer_id, item.model, item.judge_calls, item.cached_calls, item.usage, item.cost_usd) for item in result.summary.values()]
    if result.judge_calls_sent or any(row.judge_calls or row.cached_calls for row in rows):
        priced = " (at the Batch API's price)" if batch_api else ""
        console.print(usage_table(f"judge calls, tokens and estimated cost{priced}", rows))
        console.print(calls_line(result.judge_calls_sent, sum(row.judge_calls for row in rows)), markup=False, highlight=False)
    for summary in result.summary.values():
        if summary.agreement is not None:
            print_agreement(console, summary.scorer_id, summary.direction, summary.agreement)
        if summary.jury is not None:
            _print_jury(summary.scorer_id, summary.jury)
        if summary.cascade is not None:
            console.print(cascade_line(summary.scorer_id, summary.cascade), markup=False, highlight=False, soft_wrap=True)
    if counts.reused:
        console.print(f"{counts.reused} result(s) were reused from the store (same item, scorer and judge); {counts.scored} judged now.")
    for error in result.errors[:5]:
        where = where_item(error.line, error.item_id) + (f" {error.scorer_id}" if error.scorer_id else "")
        console.print(f"[red]{error.stage} error[/red] {where}: {error.error}", markup=True, highlight=False)
    if len(result.errors) > 5:
        console.print(f"... and {len(result.errors) - 5} more errors")
    for uncovered in result.not_scorable[:5]:
        console.print(f"[yellow]not scorable[/yellow] {where_item(uncovered.line, uncovered.item_id)} {uncovered.scorer_id}: {escape(uncovered.reason)}", highlight=False)
    not_scorable = sum(item.not_scorable for item in result.summary.values())
    if not_scorable > 5:
        console.print(f"... and {not_scorable - 5} more not scorable")
    if result.verdict.min_coverage < 1:
        console.print(f"Coverage floor {result.verdict.min_coverage:.0%} (--min-coverage): {result.verdict.coverage_line()}.", highlight=False)
    if result.stopped:
        console.print(f"[yellow]stopped early:[/yellow] {result.stopped}; rerun with --run {result.run} to score the rest.", highlight=False)
    if store_shares_work(store):
        console.print("Figures above are this worker's items; the whole run is in the store.", highlight=False)
    if result.stopped_by_kind == "StoreError":  # not "saved": the store is what failed
        console.print(f"Run {result.run} is kept in {store} up to where the store failed; rerun it once the store works again.", highlight=False)
        return
    console.print(f"Saved as run [bold]{result.run}[/bold] in {store} (see `scorers results --run {result.run}`).", highlight=False)


def _print_jury(scorer_id: str, jury: JuryAgreement) -> None:
    kappa = "n/a (needs --threshold, or every verdict was the same)" if jury.kappa is None else figure(jury.kappa)
    console.print(
        f"{scorer_id} jury of {len(jury.judges)}: agreement between judges (kappa) {kappa}; "
        f"{jury.disagreements} of {jury.items} item(s) flagged as disagreements",
        highlight=False,
        soft_wrap=True,
    )
    for model, agreement in jury.with_humans.items():
        console.print(f"  {model} against the human labels: {agreement_line(agreement)}", highlight=False, soft_wrap=True)


class _EvalProgress:
    """What a run shows while it lasts: a progress bar on a terminal, else a line every few
    seconds (_PlainProgress), and one line per change of a Batch API job."""

    def __init__(self, name: str, total: int | None) -> None:
        self.bar = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[failed]}"),
            TimeElapsedColumn(), TimeRemainingColumn(), ThrottleColumn(), console=errors, disable=not errors.is_terminal,
        )
        self.plain = None if errors.is_terminal else _PlainProgress(name, total)
        self.task = self.bar.add_task(name, total=total, failed="")
        self.items = self.failed = 0
        self.shown_jobs: dict[str, tuple[str, int, int]] = {}

    @contextmanager
    def showing(self) -> Iterator[None]:
        with self.bar, self.plain.ticking() if self.plain is not None else nullcontext():
            yield

    def advance(self, item: ItemResult) -> None:
        self.items += 1
        self.failed += not item.ok
        self.bar.update(self.task, advance=1, failed=f"[red]{self.failed} failed[/red]" if self.failed else "")
        if self.plain is not None:
            self.plain.update(self.items, self.failed)

    def job(self, job: BatchProgress) -> None:
        state = (job.status, job.completed, job.failed)
        if self.shown_jobs.get(job.batch_id) != state:  # one line per change, not per poll
            self.shown_jobs[job.batch_id] = state
            resumed = ", submitted before" if job.resumed else ""
            self.bar.console.print(
                f"batch {job.batch_id} ({job.model}{resumed}): {job.status}, {job.completed}/{job.total} answered, {job.failed} failed",
                markup=False, highlight=False, soft_wrap=True,
            )

    def finish(self) -> None:
        if self.plain is not None:
            self.plain.update(self.items, self.failed, final=True)


def _say_interrupted(name: str, saved: int, shown_store: str, resume: str, as_json: bool) -> None:
    if as_json:  # a pipeline reading the verdict must not mistake silence for a pass
        print_json({"run": name, "status": "interrupted", "passed": False, "stopped": "interrupted (Ctrl-C or SIGTERM)", "items_saved": saved})
    errors.print(
        f"interrupted: {saved} item(s) of run {name} are saved in {shown_store}; to score the rest, run: {resume}",
        markup=False, highlight=False, soft_wrap=True,
    )


@app.command("eval")
@one_line_errors
@flags(Selection)
@flags(ScorerSetup)
def eval_command(
    data: Annotated[Path, typer.Argument(help="Items as JSONL: input, and output, context, ground_truth, id, metadata; or queue:NAME (a review queue's golden set)")],
    scorer: Annotated[list[str], typer.Option("--scorer", help="A scorer id; repeat for more")],
    setup: ScorerSetup,
    subset: Selection,
    concurrency: ConcurrencyOption = 8,
    run: Annotated[Optional[str], typer.Option("--run", help="Run name; an existing run is resumed (default: a new one)")] = None,
    replace: Annotated[bool, typer.Option("--replace", help="Start the run of this --run name over, forgetting its results")] = False,
    store: StoreOption = DEFAULT_STORE,
    threshold: Annotated[
        Optional[list[str]],
        typer.Option("--threshold", help="SCORER_ID=VALUE: fail (exit 1) when the mean is worse; also where a score flags an item"),
    ] = None,
    max_errors: MaxErrorsOption = "0",
    config: ConfigOption = None,
    repeat: Annotated[int, typer.Option(min=1, help="Judge every item N times (distinct samples): how stable is the scorer?")] = 1,
    compare: Annotated[
        Optional[Path], typer.Option("--compare", help="A catalog holding a variant of the scorer: run both on the same items and compare")
    ] = None,
    as_json: JsonFlag = False,
    cache: Annotated[Optional[str], typer.Option("--cache", help="Response cache: a file or a postgresql:// URL (default: SCORERS_CACHE, else a file in the user cache directory)")] = None,
    no_cache: NoCacheFlag = False,
    estimate: Annotated[bool, typer.Option("--estimate", help="Print the calls, tokens and cost to expect, without calling a judge")] = False,
    max_cost: Annotated[Optional[float], typer.Option("--max-cost", min=0.000001, help="Stop (resumably) once the estimated spend reaches this many US dollars (workers sharing a run: their spend together)")] = None,
    batch_api: Annotated[
        bool, typer.Option("--batch-api", help="Send each step of all items as one provider Batch API job: half the price, answers within 24h")
    ] = False,
    poll_interval: Annotated[float, typer.Option(min=0.001, help="Seconds between polls of a Batch API job")] = 30.0,
    gate: Annotated[str, typer.Option("--gate", help="What --threshold compares: the mean, or the lower or upper bound of its 95% interval (lower: a lower-is-better scorer fails only when the judge is sure)")] = "mean",
    min_coverage: MinCoverageOption = 1.0,
    reasons: ReasonsOption = "failing",
    min_confidence: Annotated[
        Optional[float], typer.Option("--min-confidence", help="Fail the run when a scored item's confidence (from the judge's log-probabilities) is below this probability")
    ] = None,
) -> None:
    """Score every item of a data set; saved as it goes, resumable, summarised at the end."""
    tuning.quiet_item_warnings()
    shown_store = redact_url(store)
    catalog = catalog_from(config)
    thresholds = parse_thresholds(threshold or [])
    Standard.of(thresholds, gate=gate, min_coverage=min_coverage, max_errors=max_errors, min_confidence=min_confidence)  # every mistake before any call
    _refuse_together(batch_api=batch_api, min_confidence=min_confidence, max_cost=max_cost, gate=gate, compare=compare, repeat=repeat, scorers=len(scorer))

    def create(source: Catalog, scorer_id: str) -> AnyScorer:
        return setup.create(source, scorer_id, offline=estimate, threshold=thresholds.get(scorer_id) if setup.is_jury else None)

    scorers = [create(catalog, scorer_id) for scorer_id in scorer]
    selection = tuning.selected(data, subset, scorers, [catalog], store)
    response_cache = None if no_cache else ResponseCache.of(cache or True)
    if estimate:
        _show_estimate(selection, scorers, response_cache, batch_api, as_json, data)
        return
    name = run or default_run_name(data.stem)
    same_settings: dict[str, object] = {
        "--scorer": scorer, "--config": config, **setup.resume_flags(),
        "--store": shown_store if store != DEFAULT_STORE else None, "--concurrency": concurrency if concurrency != 8 else None,
        "--threshold": threshold or [], "--max-errors": max_errors if max_errors != "0" else None, **subset.resume_flags(),
        "--max-cost": max_cost, "--gate": gate if gate != "mean" else None, "--min-coverage": min_coverage if min_coverage != 1.0 else None,
        "--batch-api": batch_api, "--poll-interval": poll_interval if batch_api and poll_interval != 30.0 else None,
        "--reasons": reasons if reasons != "failing" else None, "--cache": redact_url(cache) if cache else None, "--no-cache": no_cache,
        "--min-confidence": min_confidence,
    }
    total = len(selection) if isinstance(selection, list) else count_items(data)
    common: dict[str, Any] = {"run": name, "store": store, "meta": {"data": str(data)}, "cache": response_cache or False, "reasons": reasons_policy(reasons)}
    if compare is not None:
        baseline, variant = tuning.variants(scorer, [config, compare] if config is not None else [compare], create)
        limits = tuning.variant_thresholds(thresholds, [baseline, variant])
        tuning.eval_compared(selection, baseline, variant, as_json=as_json, concurrency=concurrency, thresholds=limits, **common)
        return
    if repeat > 1:
        tuning.eval_repeated(selection, scorers, repeat=repeat, as_json=as_json, concurrency=concurrency, thresholds=thresholds, **common)
        return
    resume = _resume_command(data, name, same_settings)
    shown = _EvalProgress(name, total)
    try:
        with shown.showing():
            if batch_api:
                result = run_batch_api(
                    selection, scorers, on_item_complete=shown.advance, on_progress=shown.job, thresholds=thresholds, max_errors=max_errors,
                    gate=gate, min_coverage=min_coverage, keep_results=False, poll_interval=poll_interval, replace=replace, **common,
                )
            else:
                result = run_evals(
                    selection, scorers, on_item_complete=shown.advance, concurrency=concurrency, thresholds=thresholds, max_errors=max_errors,
                    gate=gate, min_coverage=min_coverage, replace=replace, keep_results=False, max_cost=max_cost, min_confidence=min_confidence, **common,
                )
    except KeyboardInterrupt:
        _say_interrupted(name, shown.items, shown_store, resume, as_json)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    shown.finish()
    raise typer.Exit(_outcome(result, as_json=as_json, store=shown_store, total=total, batch_api=batch_api, resume=resume))


def _outcome(result: EvalResult, *, as_json: bool, store: str, total: int | None, batch_api: bool, resume: str) -> int:
    """What a finished eval prints, and its exit status."""
    if as_json:
        print_json(result.model_dump(mode="json", exclude={"items"}))
    elif not fixed_in_setup(result.stopped_by_kind):  # a refused key or model: its one line below says it all
        _print_eval(result, store, total, batch_api)
        print_gates(result)
    return _verdict(result, resume)


def _refuse_together(*, batch_api: bool, min_confidence: float | None, max_cost: float | None, gate: str, compare: Path | None, repeat: int, scorers: int) -> None:
    """The options of one eval that cannot go together, refused before any scorer is made."""
    if batch_api and min_confidence is not None:
        raise ConfigError("--min-confidence reads the judge's log-probabilities, which a Batch API run does not ask for")
    if batch_api and max_cost is not None:
        raise ConfigError(
            "--max-cost cannot stop a Batch API job once it is submitted (each step of every item is one job); "
            "see the cost first with --estimate --batch-api"
        )
    if gate != "mean" and (compare is not None or repeat > 1):
        raise ConfigError("--gate takes a plain eval run: not --compare or --repeat")
    if compare is not None and (scorers != 1 or repeat != 1):
        raise ConfigError("--compare takes one --scorer (its variant is in the --compare catalog) and no --repeat")


def _show_estimate(selection: Any, scorers: list[AnyScorer], cache: ResponseCache | None, batch_api: bool, as_json: bool, data: Path) -> None:
    forecast = estimate_evals(selection, scorers, cache, batch_api=batch_api)
    if as_json:
        print(json.dumps(forecast.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        _print_estimate(forecast, data)


def _verdict(result: EvalResult, resume: str) -> int:
    """The exit status, with one line on stderr saying why when it is not 0 (the verdict's
    reasons, as every runner states them)."""
    verdict = result.verdict
    if verdict.passed:
        return 0
    status = EXIT_USAGE if result.stopped_by is not None and fixed_in_setup(result.stopped_by_kind) else EXIT_FAILED
    errors.print(f"error: {'; '.join(verdict.reasons)}", markup=False, highlight=False, soft_wrap=True)
    if result.stopped_by is not None or result.counts.failed:
        errors.print(f"to retry what failed: {resume}", markup=False, highlight=False, soft_wrap=True)
    elif result.stopped is not None:
        errors.print(f"to score the rest: {resume}", markup=False, highlight=False, soft_wrap=True)
    return status

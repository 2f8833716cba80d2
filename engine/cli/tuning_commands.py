"""The prompt tuner's commands: `calibrate` (pick the pass/fail threshold from labelled data),
`compare` (two variants of a scorer on the same items), and what `eval --repeat` and
`eval --compare` print."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from ..catalog import Catalog, builtin_catalog, load_scorers
from ..errors import ConfigError
from ..judge import ResponseCache
from ..runs import EvalResult, ItemResult, default_run_name, run_evals
from ..runs.confidence_map import confidence_pairs, fit_confidence_map, write_map
from ..runs.items import Data, select_items
from ..runs.traces.files import is_trace_file, trace_file_items
from ..runs.labels.golden import queue_data, queue_name
from ..runs.tuning import (
    calibration_caution,
    ComparedResult,
    RepeatedResult,
    as_variant,
    base_id,
    calibration,
    labelled_of,
    run_compare,
    run_repeated,
)
from ..scoring import AnyScorer
from ..scoring.pass_line import past_word
from ..store import redact_url
from .agreement_tables import print_agreement, print_comparison
from .app import app, console, errors
from .options import ScorerSetup, Selection, flags
from .common import (
    DEFAULT_STORE,
    ConcurrencyOption,
    MaxCostOption,
    MaxErrorsOption,
    MinCoverageOption,
    JsonFlag,
    NoCacheFlag,
    StoreOption,
    count_items,
    existing_store,
    fail_unless,
    one_line_errors,
    parse_thresholds,
    refuse_unknown_labels,
    print_json,
)
from .gate_tables import consistency_table
from .tables import figure, summary_table

RunOption = Annotated[Optional[str], typer.Option("--run", help="Run name; an existing run is resumed (default: a new one)")]


def selected(data: Path, subset: Selection, scorers: list[AnyScorer], catalogs: list[Catalog], store: str = DEFAULT_STORE) -> Data:
    """The items of `data` to score, once the file is known to be usable with `scorers` (of
    `catalogs`); `queue:NAME` is the golden set of a review queue of `store`."""
    queue = queue_name(data)
    if queue is not None:
        return select_items(queue_data(existing_store(store), queue), subset.limit, subset.sample, subset.seed)
    if not data.is_file():
        raise ConfigError(f"no data file {data}")
    if is_trace_file(data):  # the Collector's file exporter: spans become items by the catalog's `traces:` section
        items, notes = trace_file_items(data, catalogs[0].traces, [base_id(scorer.id) for scorer in scorers])
        for note in notes:
            errors.print(f"warning: not scored: {note}", markup=False, highlight=False, soft_wrap=True)
        return select_items(items, subset.limit, subset.sample, subset.seed)
    refuse_unknown_labels(data, sorted({base_id(scorer.id) for scorer in scorers}), [scorer_id for catalog in catalogs for scorer_id in catalog.ids()])
    return select_items(data, subset.limit, subset.sample, subset.seed)


def quiet_item_warnings() -> None:
    logging.getLogger("engine.evals").addHandler(logging.NullHandler())
    logging.getLogger("engine.evals").propagate = False  # errors are summarised instead


@contextmanager
def progress_bar(description: str, total: int | None) -> Iterator[Callable[[ItemResult], None]]:
    """A progress bar on stderr (only on a terminal), and the callback that advances it."""
    progress = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=errors, disable=not errors.is_terminal,
    )
    task = progress.add_task(description, total=total)
    with progress:
        yield lambda item: progress.update(task, advance=1)


def _total(data: Data) -> int | None:
    if isinstance(data, list):
        return len(data)
    return count_items(Path(data)) if isinstance(data, (str, Path)) else None


def fail_unless_passed(results: list[EvalResult], as_json: bool) -> None:
    """Exit 1, saying why in one line, unless every run passed (each run's verdict, as `eval`
    states it)."""
    reasons = [reason for result in results if not result.verdict.passed for reason in result.verdict.reasons]
    if reasons and not as_json:
        errors.print(f"error: {'; '.join(dict.fromkeys(reasons))}", markup=False, highlight=False, soft_wrap=True)
    if any(not result.verdict.passed for result in results):
        raise typer.Exit(1)


def _print_errors(count: int, run: str) -> None:
    if count:
        console.print(f"[red]{count} error(s)[/red]: `scorers results --run {run}` lists them; rerun with --run {run} to retry.", highlight=False)


# ----------------------------------------------------------------------------------- repeat


def print_repeated(repeated: RepeatedResult, worst: int = 10) -> None:
    console.print(consistency_table(repeated.stability.values()))
    for stability in repeated.stability.values():
        console.print(
            f"[bold]{stability.scorer_id}[/bold] judged {stability.repeats} times on {stability.items} item(s): "
            f"{stability.unstable} item(s) changed verdict at least once (threshold {figure(stability.threshold)}); "
            f"{figure(None if stability.flip_rate is None else stability.flip_rate * 100)}% of verdicts differ from the item's majority; "
            f"mean spread (standard deviation) of a score {figure(stability.mean_spread)}.",
            highlight=False,
        )
        labelled = [agreement for agreement in stability.agreement if agreement is not None]
        if labelled:
            table = Table(title=f"{stability.scorer_id}: agreement per repeat", title_justify="left")
            for column in ("repeat", "run", "labelled", "accuracy", "F1", "kappa", "MAE", "Spearman"):
                table.add_column(column, justify="right")
            for position, (run, agreement) in enumerate(zip(repeated.runs, stability.agreement), start=1):
                if agreement is None:
                    continue
                binary, numeric = agreement.binary, agreement.numeric
                table.add_row(
                    str(position), run, str(agreement.labelled),
                    figure(binary.accuracy.value if binary else None), figure(binary.f1.value if binary else None),
                    figure(binary.kappa.value if binary else None), figure(numeric.mean_abs_error.value if numeric else None),
                    figure(numeric.spearman.value if numeric else None),
                )
            console.print(table)
        unstable = [item for item in stability.per_item if item.flips or (item.spread or 0) > 0][:worst]
        if unstable:
            table = Table(title=f"{stability.scorer_id}: least stable items", title_justify="left")
            for column in ("item", "scores", "mean", "spread", "flips"):
                table.add_column(column, overflow="fold")
            for item in unstable:
                table.add_row(item.item_id, ", ".join(figure(score) for score in item.scores), figure(item.mean), figure(item.spread), str(item.flips))
            console.print(table)
    console.print(f"Saved as runs {', '.join(repeated.runs)}.", highlight=False)


def eval_repeated(data: Data, scorers: list[AnyScorer], *, repeat: int, run: str, store: str, as_json: bool, **options: Any) -> None:
    with progress_bar(f"{run} x{repeat}", (_total(data) or 0) * repeat or None) as advance:
        repeated = run_repeated(data, scorers, repeat=repeat, run=run, store=store, on_item_complete=advance, **options)
    if as_json:
        print_json({"runs": repeated.runs, "passed": all(result.verdict.passed for result in repeated.results),
                    "verdicts": [result.verdict.model_dump(mode="json") for result in repeated.results], "stability": {key: value.model_dump(mode="json") for key, value in repeated.stability.items()}})
    else:
        print_repeated(repeated)
    fail_unless_passed(repeated.results, as_json)


# ---------------------------------------------------------------------------------- compare


def print_compared(compared: ComparedResult, store: str) -> None:
    result = compared.result
    console.print(summary_table(f"run {result.run}: {result.counts.items} items", list(result.summary.values())))
    for summary in result.summary.values():
        if summary.agreement is not None:
            print_agreement(console, summary.scorer_id, summary.direction, summary.agreement, worst=3)
    if compared.comparison.items:
        print_comparison(console, compared.comparison)
    else:
        console.print("No labelled item was scored by both variants: give items an `expected` label to compare agreement.")
    _print_errors(len(result.errors), result.run)
    console.print(f"Saved as run [bold]{result.run}[/bold] in {redact_url(store)} (`scorers report {result.run} -o report.html`).", highlight=False)


def eval_compared(data: Data, baseline: AnyScorer, variant: AnyScorer, *, run: str, store: str, as_json: bool, **options: Any) -> None:
    with progress_bar(run, _total(data)) as advance:
        compared = run_compare(data, baseline, variant, run=run, store=store, on_item_complete=advance, **options)
    if as_json:
        print_json(
            {
                "run": compared.result.run,
                "passed": compared.result.verdict.passed,
                "verdict": compared.result.verdict.model_dump(mode="json"),
                "summary": {key: value.model_dump(mode="json") for key, value in compared.result.summary.items()},
                "comparison": compared.comparison.model_dump(mode="json"),
                "errors": [error.model_dump(mode="json") for error in compared.result.errors],
            }
        )
    else:
        print_compared(compared, store)
    fail_unless_passed([compared.result], as_json)


def catalog_file(config: Path) -> Path:
    """A catalog given as its YAML file, or as the folder holding its `scorers.yaml`."""
    return config / "scorers.yaml" if config.is_dir() else config


def _label(config: Path) -> str:
    """A variant's name: its catalog file's, or its folder's for a `scorers.yaml`."""
    path = catalog_file(config)
    return path.resolve().parent.name if path.stem == "scorers" else path.stem


def variants(
    scorer: list[str], config: list[Path], create: Callable[[Any, str], AnyScorer]
) -> tuple[AnyScorer, AnyScorer]:
    """The two variants `compare` runs: two ids of one catalog, or one id from two catalogs
    (a single --config is compared with the built-in catalog)."""
    if len(scorer) == 2 and len(config) <= 1:
        catalog = load_scorers(catalog_file(config[0])) if config else builtin_catalog()
        return create(catalog, scorer[0]), create(catalog, scorer[1])
    if len(scorer) == 1 and len(config) in (1, 2):
        catalogs = [builtin_catalog(), load_scorers(catalog_file(config[0]))] if len(config) == 1 else [load_scorers(catalog_file(path)) for path in config]
        labels = ["builtin", _label(config[0])] if len(config) == 1 else [_label(path) for path in config]
        if labels[0] == labels[1]:
            labels = [f"{labels[0]}1", f"{labels[1]}2"]
        return as_variant(create(catalogs[0], scorer[0]), labels[0]), as_variant(create(catalogs[1], scorer[0]), labels[1])
    raise ConfigError(
        "compare needs two variants: --scorer A --scorer B (one catalog), or --scorer ID with --config A.yaml --config B.yaml "
        "(or one --config, compared with the built-in scorer)"
    )


@app.command("compare")
@one_line_errors
@flags(Selection)
@flags(ScorerSetup)
def compare_command(
    data: Annotated[Path, typer.Argument(help="Labelled items as JSONL (with `expected`), or queue:NAME for a review queue's golden set")],
    scorer: Annotated[list[str], typer.Option("--scorer", help="A scorer id: two ids, or one id with two --config")],
    setup: ScorerSetup,
    subset: Selection,
    config: Annotated[Optional[list[Path]], typer.Option("--config", help="A catalog YAML holding a variant; repeat for the second")] = None,
    concurrency: ConcurrencyOption = 8,
    run: RunOption = None,
    store: StoreOption = DEFAULT_STORE,
    threshold: Annotated[Optional[list[str]], typer.Option("--threshold", help="SCORER_ID=VALUE: where a score flags an item")] = None,
    no_cache: NoCacheFlag = False,
    max_cost: MaxCostOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Run two variants of a scorer on the same items and compare their agreement with the labels."""
    quiet_item_warnings()
    baseline, variant = variants(scorer, config or [], setup.create)
    catalogs = [builtin_catalog(), *(load_scorers(catalog_file(path)) for path in config or [])]
    items = selected(data, subset, [baseline, variant], catalogs, store)
    name = run or default_run_name(f"{data.stem}-compare")
    limits = variant_thresholds(parse_thresholds(threshold or []), [baseline, variant])
    eval_compared(
        items, baseline, variant, run=name, store=store, as_json=as_json, concurrency=concurrency, thresholds=limits, meta={"data": str(data)},
        # One cache for both variants: a step whose request is the same for both is sent once.
        cache=False if no_cache else ResponseCache.of(True) or False, max_cost=max_cost,
    )


def variant_thresholds(thresholds: dict[str, float], scorers: list[AnyScorer]) -> dict[str, float]:
    """Thresholds by scorer id; a variant (`id@label`) takes its base id's."""
    limits = {scorer.id: thresholds.get(scorer.id, thresholds.get(base_id(scorer.id))) for scorer in scorers}
    unknown = sorted(set(thresholds) - set(limits) - {base_id(scorer_id) for scorer_id in limits})
    if unknown:
        raise ConfigError(f"--threshold for {', '.join(unknown)}, which is not among the compared scorers")
    return {scorer_id: value for scorer_id, value in limits.items() if value is not None}


# -------------------------------------------------------------------------------- calibrate


@app.command("calibrate")
@one_line_errors
@flags(Selection)
@flags(ScorerSetup)
def calibrate_command(
    data: Annotated[Path, typer.Argument(help="Labelled items as JSONL (with `expected`), or queue:NAME for a review queue's golden set")],
    scorer: Annotated[str, typer.Option("--scorer", help="The scorer id to calibrate")],
    setup: ScorerSetup,
    subset: Selection,
    metric: Annotated[str, typer.Option(help="What the best threshold maximises: f1 or kappa")] = "f1",
    config: Annotated[Optional[Path], typer.Option("--config", help="A host catalog YAML (its scorers, prompts, schemas)")] = None,
    concurrency: ConcurrencyOption = 8,
    run: Annotated[Optional[str], typer.Option("--run", help="Run name: an existing run is reused, only missing items are judged")] = None,
    store: StoreOption = DEFAULT_STORE,
    no_cache: NoCacheFlag = False,
    max_errors: MaxErrorsOption = "0",
    min_coverage: MinCoverageOption = 1.0,
    max_cost: MaxCostOption = None,
    as_json: JsonFlag = False,
    fit_confidence: Annotated[bool, typer.Option(
        "--fit-confidence", help="Also fit a monotone map from the judge's confidence to agreement with people (scikit-learn), kept only when held-out items show the gain",
    )] = False,
) -> None:
    """Sweep the pass/fail threshold over labelled data and print the one that agrees best.
    A threshold is recommended only from a run that scored every item (or as many as
    --min-coverage and --max-errors allow): one picked on the items a failing judge happened
    to score would flatter it."""
    if metric not in ("f1", "kappa"):
        raise ConfigError(f"--metric must be f1 or kappa, got {metric!r}")
    quiet_item_warnings()
    catalog = load_scorers(catalog_file(config)) if config is not None else builtin_catalog()
    scorer_object = setup.create(catalog, scorer)
    items = selected(data, subset, [scorer_object], [catalog], store)
    name = run or default_run_name(f"{data.stem}-calibrate")
    with progress_bar(name, _total(items)) as advance:
        result = run_evals(items, [scorer_object], on_item_complete=advance, concurrency=concurrency, run=name, store=store,
            meta={"data": str(data), "made_by": "calibrate"}, cache=False if no_cache else ResponseCache.of(True) or False, max_errors=max_errors,
            min_coverage=min_coverage, max_cost=max_cost,
        )
    fail_unless(result.verdict)
    labelled = labelled_of(result, scorer_object.id)
    if not labelled:
        raise ConfigError(f"no item of {data} has an `expected` label for {scorer} that was scored: nothing to calibrate against")
    found = calibration(scorer_object, labelled, metric)  # type: ignore[arg-type]
    caution = calibration_caution(found)
    fit = fit_confidence_map(confidence_pairs(scorer_object, labelled)) if fit_confidence else None
    if fit is not None and fit.kept:
        fit.written = str(write_map(fit, catalog.maps_folder, scorer_object.id, scorer_object.fingerprint))
    if as_json:
        print_json({"run": result.run, "passed": result.verdict.passed, **found.model_dump(mode="json"), "caution": caution, **({"confidence_map": fit.model_dump(mode="json")} if fit else {})})
        return
    better_side = past_word(scorer_object.plan.direction)
    table = Table(title=f"{scorer}: a score {better_side} the threshold flags the item ({found.labelled} labelled)", title_justify="left")
    for column in ("threshold", "flagged", "precision", "recall", "F1", "kappa", "accuracy", "balanced accuracy", ""):
        table.add_column(column, justify="right")
    for point in found.points:
        mark = "[bold green]<- best[/bold green]" if point is found.best else ""
        table.add_row(
            figure(point.threshold), str(point.flagged), figure(point.precision), figure(point.recall), figure(point.f1),
            figure(point.kappa), figure(point.accuracy), figure(point.balanced_accuracy), mark,
        )
    console.print(table)
    if found.best is None or found.agreement is None:
        console.print(f"No threshold gives a defined {metric}: the labels or the scores do not vary.")
        return
    console.print(
        f"Best threshold by {metric}: [bold]{figure(found.best.threshold)}[/bold] "
        f"(use --threshold {scorer}={figure(found.best.threshold)}). The figures there, with 95% intervals:",
        highlight=False,
    )
    print_agreement(console, scorer, scorer_object.plan.direction, found.agreement, worst=5)
    if caution is not None:
        console.print(f"[yellow]{caution}[/yellow]", highlight=False)
    if fit is not None:
        console.print(f"Confidence map: {fit.verdict}" + (f" Written to {fit.written}." if fit.written else ""), highlight=False, soft_wrap=True)
    _print_errors(len(result.errors), result.run)

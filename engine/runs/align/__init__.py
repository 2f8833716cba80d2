"""`align`: a scorer that learns from people's labels, and changes only on evidence.

    result = align("labelled.jsonl", "hallucination", metric="kappa", max_cost=2, store=".scorers/results.sqlite")
    result.accepted, result.verdict, result.variant_dir

The labelled items are split into train, dev and test (stratified, seeded). Candidates are
tried on dev, one change at a time: worked examples (train items the judge got wrong, with
people's answer, as an `examples:` list on the judging step), a rewrite of that step's
instructions proposed by an optimizer (itself a scorer, in `optimizer/`), and the
calibrated threshold. The best is measured once on test; it is accepted only when the paired
bootstrap interval of the improvement lies above 0, and only then written, as a variant
catalog beside the original. For a cascade, what is tuned so is its margin (margin.py). Every judge call is a stored batch run through the response
cache: a rerun resumes and repeats no paid call.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ...catalog import Catalog, builtin_catalog
from ...errors import ConfigError
from ...judge.settings import JudgeSettings
from ...scoring import AnyScorer, Cascade
from ...store import Store, open_store
from ...sync import blocking
from ..batch.estimate import aestimate_evals
from ..items import EvalItem, UnreadableItem, read_jsonl
from .decision import accepted_on_test, shown
from .margin import tune_margin
from .results import AlignMetric, AlignResult, SplitSizes, Trial
from .search import Search
from ...errors import BudgetReached
from .session import CacheChoice, JudgeStopped, NotWhole, Progress, Session, metric_of, no_progress, one_at_a_time
from .split import LabelledItem, default_group, split_items
from .variants import Workshop
from .write import write_variant

if TYPE_CHECKING:
    from ...judge import JudgeConfig

METRICS: tuple[AlignMetric, ...] = ("kappa", "balanced_accuracy", "f1", "mae")


def labelled_items(data: str | Path | Iterable[Any], scorer_id: str) -> tuple[list[LabelledItem], int]:
    """The items labelled for the scorer, each with a stable id; and how many are not."""
    where = str(data) if isinstance(data, (str, Path)) else "the data"
    raws = read_jsonl(data) if isinstance(data, (str, Path)) else data
    items: list[LabelledItem] = []
    unlabelled = 0
    seen: set[str] = set()
    for number, raw in enumerate(raws, start=1):
        if isinstance(raw, UnreadableItem):
            raise ConfigError(raw.message)
        try:
            item = EvalItem.of(raw)
        except (ValidationError, ValueError) as exc:
            raise ConfigError(f"{where}: item {number}: {str(exc).splitlines()[0]}") from None
        expected = item.expected_for(scorer_id)
        if expected is None:
            unlabelled += 1
            continue
        item_id = item.id or f"line-{number}"
        if item_id in seen:
            raise ConfigError(f"{where}: item {number}: the id {item_id!r} is used twice")
        seen.add(item_id)
        items.append(LabelledItem(id=item_id, raw={**dict(raw), "id": item_id}, expected=expected))
    return items, unlabelled


async def aalign(
    data: str | Path | Iterable[Any],
    scorer_id: str,
    *,
    catalog: Catalog | None = None,
    metric: AlignMetric = "kappa",
    trials: int = 8,
    max_cost: float | None = None,
    optimizer_model: str | None = None,
    output_dir: str | Path | None = None,
    run: str | None = None,
    store: Store | str | Path | None = None,
    seed: int = 0,
    group_by: str | None = None,
    concurrency: int = 8,
    cache: CacheChoice = True,
    on_event: Callable[[str], None] | None = None,
    progress: Progress | None = None,
    model: str | JudgeConfig | None = None,
    judge: JudgeSettings | None = None,
) -> AlignResult:
    """Align `scorer_id` (of `catalog`, the built-in one by default) with the labels of
    `data`; see the module docstring. `trials` bounds the candidates judged on dev; `model`
    and `judge` choose the judge as in `Catalog.create`. `on_event(line)` hears
    each stage as it ends, `progress(what, items)` gives each run's item callback (a progress
    bar). With `store`, a rerun under the same `run` reuses every result, and a second align
    of that `run` while this one runs is refused (ConfigError, naming its process). `group_by`
    (a metadata field; `pair` by default when items carry one) keeps related items on one
    side of the split."""
    if metric not in METRICS:
        raise ConfigError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
    if trials < 1:
        raise ConfigError(f"trials must be at least 1, got {trials}")
    catalog = catalog or builtin_catalog()
    items, unlabelled = labelled_items(data, scorer_id)
    if metric == "mae" and all(isinstance(item.expected, bool) for item in items):
        raise ConfigError("metric mae needs scores as labels; these labels are pass/fail (use kappa, balanced_accuracy or f1)")
    grouping = group_by or default_group(items)
    split = split_items(items, seed, str(data) if isinstance(data, (str, Path)) else "the data", grouping)
    sizes = SplitSizes(train=len(split.train), dev=len(split.dev), test=len(split.test), unlabelled=unlabelled)
    say = on_event or (lambda message: None)
    say(f"split (seed {seed}{f', by {grouping}' if grouping else ''}): {sizes.train} train, {sizes.dev} dev, {sizes.test} test" + (f"; {unlabelled} unlabelled left out" if unlabelled else ""))
    settings = (judge or JudgeSettings()).given(model)
    baseline = catalog.create(scorer_id, judge=settings)
    direction = baseline.plan.direction
    session = Session(
        run=run or f"align-{scorer_id}-{Path(data).stem if isinstance(data, (str, Path)) else 'data'}-s{seed}",
        metric=metric, direction=direction, human_threshold=baseline.pass_line.scale / 2,
        store=store, cache=cache, concurrency=concurrency, max_cost=max_cost, on_event=say, progress=progress or no_progress,
    )
    # One process at a time: a second align of the same runs at once would judge every item
    # again beside the first and write the variant twice (see `one_at_a_time`).
    async with one_at_a_time(store, session.run):
        await asyncio.to_thread(_open_budget, session, store)
        if isinstance(baseline, Cascade):  # what align tunes in a cascade is its margin (margin.py)
            result = AlignResult(scorer_id=scorer_id, metric=metric, seed=seed, split=sizes, baseline_dev=None, baseline_threshold=baseline.pass_line.value, verdict="")
            try:
                await tune_margin(session, baseline, split, result, output_dir)
            except (BudgetReached, JudgeStopped, NotWhole) as stop:
                _stopped(result, stop)
            result.runs, result.cost_usd = session.runs, round(session.spent, 6)
            return result
        with tempfile.TemporaryDirectory(prefix="align-") as folder:
            search = Search(
                session=session, workshop=Workshop(catalog=catalog, scorer_id=scorer_id, judge=settings, folder=Path(folder)), split=split, trials_left=trials,
                base_threshold=baseline.pass_line.value, best_scorer=baseline,
                result=AlignResult(scorer_id=scorer_id, metric=metric, seed=seed, split=sizes, baseline_dev=None, baseline_threshold=baseline.pass_line.value, verdict=""),
            )
            result = search.result
            result.estimated_cost_usd = await _estimate(items, split.dev, split.test, baseline, trials)
            _say_estimate(say, result.estimated_cost_usd, trials, max_cost)
            try:
                await _search(search, optimizer_model, output_dir)
            except (BudgetReached, JudgeStopped, NotWhole) as stop:
                _stopped(result, stop)
        result.runs, result.cost_usd = session.runs, round(session.spent, 6)
        return result


def _stopped(result: AlignResult, stop: Exception) -> None:
    """Align ended before its verdict: nothing is changed, and the command does not pass."""
    result.stopped = str(stop)
    result.stopped_by_kind = stop.kind if isinstance(stop, JudgeStopped) else None
    if isinstance(stop, NotWhole):
        result.verdict = (f"Stopped: {stop}. Nothing was changed: align measures a scorer only on runs that scored every item "
                          "(every result so far is stored; the same command continues once they can be scored).")
    else:
        result.verdict = f"Stopped: {stop}. Nothing was changed; run the same command again to continue (every result so far is stored)."


def _open_budget(session: Session, store: Store | str | Path | None) -> None:
    opened = open_store(store, reading=True)
    try:
        session.open_budget(opened)
    finally:
        if opened is not None and opened is not store:
            opened.close()
    if session.limit is not None and session.limit.spent_before:
        session.say(f"budget: ${session.limit.spent_before:.4f} of ${session.limit.max_cost:g} spent by earlier runs of this align")


async def _estimate(items: Sequence[LabelledItem], dev: Sequence[LabelledItem], test: Sequence[LabelledItem], baseline: AnyScorer, trials: int) -> float | None:
    """What align costs at most: the baseline on every item, every trial on dev, the best on
    test, at the price of a whole scorer run per item (cached and stored answers cost less)."""
    estimate = await aestimate_evals([item.raw for item in items], [baseline])
    cost = estimate.cost_high_usd if estimate.cost_high_usd is not None else estimate.cost_usd
    if cost is None or not estimate.items:
        return None
    return cost / estimate.items * (len(items) + trials * len(dev) + len(test))


def _say_estimate(say: Callable[[str], None], estimate: float | None, trials: int, max_cost: float | None) -> None:
    if estimate is None:
        say("estimate: the judge model has no price, so the cost is not known (--max-cost needs one)")
        return
    budget = f" (budget ${max_cost:g})" if max_cost is not None else ""
    say(f"estimate: about ${estimate:.4f} at most for {trials} trial(s), before cached and stored answers{budget}")
    if max_cost is not None and estimate > max_cost:
        say("the estimate is above the budget: align stops when the budget is spent; the same command continues it")


async def _search(search: Search, optimizer_model: str | None, output_dir: str | Path | None) -> None:
    session, result, split = search.session, search.result, search.split
    assert search.best_scorer is not None  # the scorer as it is, until a candidate beats it
    search.baseline = await session.judge(search.best_scorer, [*split.train, *split.dev, *split.test], "baseline", "baseline on every item")
    search.best_dev_labelled = search.labelled(split.dev)
    result.baseline_dev = search.best_dev = metric_of(search.best_dev_labelled, search.base_threshold, session.direction, session.metric)
    session.say(f"baseline: {session.metric} on dev {shown(result.baseline_dev)}")
    await search.examples()
    await search.instructions(optimizer_model)
    search.threshold()
    if not search.best.changes_scorer and search.best.threshold is None:
        result.verdict = f"No candidate beat the current scorer on dev ({session.metric} {shown(result.baseline_dev)}): nothing was changed."
        return
    result.chosen, result.threshold = search.best.described(search.workshop.step_id), search.best.threshold
    result.test = await search.test()
    _decide(search, output_dir)


def _decide(search: Search, output_dir: str | Path | None) -> None:
    """Accepted only when the test interval of the improvement lies above 0 (below, for MAE)."""
    result = search.result
    folder = accepted_on_test(result, "candidate", "; ".join(result.chosen), output_dir)
    if folder is not None:
        write_variant(search.workshop, search.best, result, folder)


align = blocking(aalign)


__all__ = ["AlignMetric", "AlignResult", "METRICS", "Trial", "aalign", "align", "labelled_items"]

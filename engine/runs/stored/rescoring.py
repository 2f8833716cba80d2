"""Re-scoring what a store holds: the items a run (batch or live) stored (output, input,
context, ground truth, metadata) scored by another scorer, or another version of one, as a
new run that records where its items came from; and what changed, item by item, between two
runs of the same items.

Only stored replies are re-scored: live replies that were sampled out were never stored,
and a reply stored cut short, left out or cleared by the retention period (its
`content_note`) is skipped and counted, never judged as if it were whole."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from pydantic import BaseModel, Field

from ...catalog.monitors import parse_duration
from ...errors import ConfigError
from ...scoring import AnyScorer
from ...store import ResultRecord, Store
from ...sync import blocking
from ..batch import arun_evals, default_run_name
from ..identity import check_claim
from ..verdict import Standard, Verdict, decide, judge_scorer
from ..items import EvalItem, base_id
from ..results import EvalResult, FigureEstimate
from ..measures.stats import bootstrap
from .reading import existing_run, paired_scorers, run_records


class SkippedItem(BaseModel):
    item_id: str
    reason: str


class RescoreResult(BaseModel):
    """The new run, where its items came from, and the stored items left out (and why)."""

    run: str
    source_run: str
    items: int = Field(description="Items re-scored")
    skipped: list[SkippedItem] = Field(default_factory=list)
    result: EvalResult
    verdict: Verdict = Field(description="The new run's verdict, with the stored items that could not be re-scored counted as not covered")
    passed: bool = False


def stored_items(store: Store, run: str, since: datetime | None = None, from_scorer: str | None = None) -> tuple[list[EvalItem], list[SkippedItem]]:
    """The items of a stored run (one per item id, in the run's order), and those that
    cannot be re-scored because their content was not kept whole."""
    existing_run(store, run)
    chosen: dict[str, ResultRecord] = {}
    for record in store.query(run=run, since=since):
        if from_scorer is not None and record.scorer_id != from_scorer:
            continue
        # Records of one item share its content; prefer one that kept the output.
        if record.item_id not in chosen or (chosen[record.item_id].output is None and record.output is not None):
            chosen[record.item_id] = record
    if from_scorer is not None and not chosen:
        raise ConfigError(f"run {run!r} has no record of scorer {from_scorer!r}" + (" in that time" if since else ""))
    ordered = sorted(chosen.values(), key=lambda record: (record.item_index if record.item_index is not None else 1 << 62, record.started_at, record.item_id))
    items, skipped = [], []
    for record in ordered:
        if record.content_note:
            kept = ", ".join(f"{field} {note}" for field, note in sorted(record.content_note.items()))
            skipped.append(SkippedItem(item_id=record.item_id, reason=f"stored content not whole ({kept})"))
            continue
        if record.output is None:
            skipped.append(SkippedItem(item_id=record.item_id, reason="no output stored"))
            continue
        items.append(
            EvalItem(
                id=record.item_id, input=record.input, output=record.output, context=record.context, ground_truth=record.ground_truth,
                metadata=record.metadata, expected=record.expected if record.expected is not None else {},
            )
        )
    return items, skipped


def _since(since: datetime | timedelta | str | None) -> datetime | None:
    if since is None or isinstance(since, datetime):
        return since
    span = parse_duration(since, "since") if isinstance(since, str) else since
    return datetime.now(timezone.utc) - span


async def arescore(
    store: Store,
    run: str,
    scorer: AnyScorer,
    *,
    new_run: str | None = None,
    since: datetime | timedelta | str | None = None,
    from_scorer: str | None = None,
    concurrency: int = 8,
    **options: Any,
) -> RescoreResult:
    """Score the items stored by `run` (those finished `since`: a datetime, a timedelta or
    '7d'; of `from_scorer`'s records only, when given) with `scorer`, as the new run
    `new_run`. A human label stored beside an item stays with it when the new scorer is a
    version of the one it labelled. `options` go to run_evals (cache, thresholds, ...)."""
    moment = _since(since)
    name = new_run or default_run_name(f"{run}-{scorer.id}")
    if name == run:
        raise ConfigError(f"the new run would overwrite the run it re-scores ({run!r}): give it another name", parameter="new_run")
    check_claim(store, name, "rescore")  # before any work: a live or batch run of that name stays as it is
    items, skipped = stored_items(store, run, moment, from_scorer)
    if not items:
        why = f"; {len(skipped)} stored item(s) cannot be: {skipped[0].reason}" if skipped else ""
        raise ConfigError(f"nothing to re-score: run {run!r} holds no stored item to score again" + (" in that time" if moment else "") + why, parameter="since" if moment else None)
    labelled_for = {record.item_id: base_id(record.scorer_id) for record in store.query(run=run, since=moment) if record.expected is not None}
    for item in items:
        if labelled_for.get(item.id or "") != base_id(scorer.id):
            item.expected = {}
    origin: Mapping[str, Any] = {
        "run": run, "scorer": from_scorer, "since": moment.isoformat() if moment else None, "items": len(items), "skipped": len(skipped),
    }
    meta = {"data": f"run {run}", "rescored_from": origin, **options.pop("meta", {})}
    result = await arun_evals(items, scorer, concurrency=concurrency, run=name, store=store, meta=meta, kind="rescore", **options)
    verdict = _with_skipped(result, scorer, len(skipped), options)
    return RescoreResult(run=name, source_run=run, items=len(items), skipped=skipped, result=result, verdict=verdict, passed=verdict.passed)


def _with_skipped(result: EvalResult, scorer: AnyScorer, skipped: int, options: Mapping[str, Any]) -> Verdict:
    """The run's verdict, the stored items that could not be re-scored counted as items the
    scorer could not judge: a re-score that left items out did not cover them."""
    if not skipped:
        return result.verdict
    standard = Standard.of(options.get("thresholds"), gate=options.get("gate", "mean"), min_coverage=options.get("min_coverage", 1.0), max_errors=options.get("max_errors"))
    summary = result.summary[scorer.id]
    interval = (summary.mean_interval.low, summary.mean_interval.high) if summary.mean_interval is not None else None
    judged = judge_scorer(summary.model_copy(update={"not_scorable": summary.not_scorable + skipped}), standard.line_for(scorer.id, scorer.pass_line), standard, interval)
    return decide([judged], standard, items=result.counts.items + skipped, failed_items=result.counts.failed, stopped_by=result.stopped_by, stopped=result.stopped)


rescore = blocking(arescore)


# ------------------------------------------------------------------------- what changed


class ScoreChange(BaseModel):
    item_id: str
    before: float
    after: float
    better: bool = Field(description="The new score is better in the scorer's direction")


class ScoreChanges(BaseModel):
    """One scorer's scores of the items two runs share, before and after."""

    baseline: str
    variant: str
    items: int = 0
    mean_before: float | None = None
    mean_after: float | None = None
    delta: FigureEstimate = Field(default_factory=lambda: FigureEstimate(value=None), description="Mean of after - before, with a paired bootstrap interval")
    changed: list[ScoreChange] = Field(default_factory=list, description="Items whose score changed, largest change first")
    only_before: int = Field(default=0, description="Items scored in the baseline only")
    only_after: int = 0


def score_changes(store: Store, baseline: str, variant: str) -> list[ScoreChanges]:
    """Each scorer of `baseline` against its counterpart in `variant` (the same id, else
    the same base id, else the only scorer of each), on the items both scored."""
    existing_run(store, baseline)
    existing_run(store, variant)
    records = run_records(store, baseline), run_records(store, variant)
    found = []
    for a, b in paired_scorers(list(records[0]), list(records[1])):
        before = {record.item_id: record for record in records[0][a] if record.ok}
        after = {record.item_id: record for record in records[1][b] if record.ok}
        shared = [item_id for item_id in before if item_id in after]
        pairs = [(float(before[item_id].score or 0.0), float(after[item_id].score or 0.0)) for item_id in shared]
        change = ScoreChanges(
            baseline=f"{baseline}:{a}", variant=f"{variant}:{b}", items=len(pairs),
            only_before=len(before.keys() - after.keys()), only_after=len(after.keys() - before.keys()),
        )
        if pairs:
            lower = records[1][b][0].direction == "lower_is_better"
            estimates = bootstrap(
                len(pairs),
                lambda picked: {
                    "before": sum(pairs[i][0] for i in picked) / len(picked),
                    "after": sum(pairs[i][1] for i in picked) / len(picked),
                    "delta": sum(pairs[i][1] - pairs[i][0] for i in picked) / len(picked),
                },
            )
            change.mean_before, change.mean_after, change.delta = estimates["before"].value, estimates["after"].value, estimates["delta"]
            moved = [
                ScoreChange(item_id=item_id, before=old, after=new, better=(new < old) if lower else (new > old))
                for item_id, (old, new) in zip(shared, pairs)
                if old != new
            ]
            change.changed = sorted(moved, key=lambda item: -abs(item.after - item.before))
        found.append(change)
    return found

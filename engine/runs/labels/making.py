"""Making a review queue: the items of a stored run (batch, live or rescored) that a reviewer
would want, or of a JSONL file, each with what the judge made of it.

Filters (an item enters when any filter given picks it):
- `disagreement`: the judges of a jury disagreed;
- `near` or `near:MARGIN`: the score is within MARGIN of the threshold (default a tenth of the scale);
- `flips:RUN`: the verdict differs from the one RUN gave the same item (two versions of a scorer);
- `failed`: the scorer failed or could not judge the item;
- `unsure` or `unsure:BOUND`: the judge's confidence in the item's pass/fail (from its
  log-probabilities) is below BOUND (default 0.8).
Then `sample` items at most, drawn with `seed` from each of the judge's verdicts (flag, pass,
failed) in proportion to its share, so a sample keeps both kinds; `least_sure_first` puts the
items the judge was least sure of first (those without a confidence last)."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...catalog.queues import QueueSpec
from ...errors import ConfigError
from ...scoring.pass_line import PassLine, flags
from ...scoring.transcripts import as_messages, assistant_text, extract_tool_calls
from ...store import JudgedItem, KeepsLabels, ResultRecord, ReviewItem, ReviewQueue, RunInfo, Store
from ..items import EvalItem, numbered_jsonl
from ...scoring.passing import UNSURE_BELOW
from ..measures.confidence import confidence_of
from ..measures.stats import judged_answers
from ..stored.reading import existing_run, run_line, run_threshold

FILTERS = ("disagreement", "near", "flips", "failed", "unsure")


@dataclass(frozen=True)
class Filter:
    name: str
    margin: float | None = None  # near's margin; unsure's bound
    other_run: str | None = None

    def __str__(self) -> str:
        if self.name in ("near", "unsure"):
            return f"{self.name}:{self.margin:g}" if self.margin is not None else self.name
        return f"flips:{self.other_run}" if self.name == "flips" else self.name


def parse_filter(text: str) -> Filter:
    """`disagreement`, `near`, `near:0.1`, `flips:RUN` or `failed`; anything else is one line
    naming the filters there are."""
    name, _, argument = text.partition(":")
    if name == "near":
        if not argument:
            return Filter("near")
        try:
            margin = float(argument)
        except ValueError:
            raise ConfigError(f"--filter {text}: the margin after near: is a number, e.g. near:0.1") from None
        if not margin > 0:
            raise ConfigError(f"--filter {text}: the margin must be above 0")
        return Filter("near", margin=margin)
    if name == "flips":
        if not argument:
            raise ConfigError(f"--filter {text}: name the run to compare with, e.g. flips:nightly-v1")
        return Filter("flips", other_run=argument)
    if name == "unsure":
        if not argument:
            return Filter("unsure")
        try:
            bound = float(argument)
        except ValueError:
            raise ConfigError(f"--filter {text}: the bound after unsure: is a probability, e.g. unsure:0.8") from None
        if not 0 < bound <= 1:
            raise ConfigError(f"--filter {text}: the bound is a probability above 0 and at most 1")
        return Filter("unsure", margin=bound)
    if name in ("disagreement", "failed") and not argument:
        return Filter(name)
    raise ConfigError(f"--filter {text}: unknown filter; the filters are disagreement, near[:MARGIN], flips:RUN, failed and unsure[:BOUND]")


def review_fields(record_or_item: ResultRecord | EvalItem) -> dict[str, Any]:
    """What a reviewer may be shown of an item: its input, its output as text (and the whole
    conversation with its tool calls when the output is one), context, ground truth, metadata."""
    output = record_or_item.output
    fields: dict[str, Any] = {"input": record_or_item.input}
    turns = getattr(record_or_item, "turns", None)
    conversation = output if isinstance(output, list) else turns
    if conversation:
        fields["turns"] = conversation
        fields["output"] = assistant_text(conversation)
        calls = extract_tool_calls(as_messages(conversation))
        if calls:
            fields["tool_calls"] = calls
    elif output is not None:
        fields["output"] = output if isinstance(output, str) else str(output)
    for name in ("context", "ground_truth"):
        value = getattr(record_or_item, name)
        if value not in (None, [], ""):
            fields[name] = value
    if record_or_item.metadata:
        fields["metadata"] = record_or_item.metadata
    return fields


def judged_of(record: ResultRecord) -> JudgedItem:
    return JudgedItem(
        outcome=record.outcome,
        score=record.score,
        reason=record.reason,
        error=record.error or record.not_scorable,
        answers=judged_answers(record.steps),
        judges=[{"model": judge.model, "score": judge.score, "reason": judge.reason} for judge in record.judges] if record.judges else None,
        model=record.model,
        judged_at=record.finished_at,
    )


def _stratum(record: ResultRecord, threshold: float) -> str:
    if not record.ok or record.score is None:
        return "failed"
    return "flag" if flags(record.score, threshold, record.direction) else "pass"


def stratified_sample(records: Sequence[ResultRecord], size: int, seed: int, threshold: float) -> list[ResultRecord]:
    """`size` records drawn with `seed`, each of the judge's verdicts (flag, pass, failed)
    holding its share (largest remainders; a verdict present keeps at least one), in their order."""
    if size >= len(records):
        return list(records)
    strata: dict[str, list[ResultRecord]] = {}
    for record in records:
        strata.setdefault(_stratum(record, threshold), []).append(record)
    shares = {name: size * len(group) / len(records) for name, group in strata.items()}
    taken = {name: max(1, int(share)) for name, share in shares.items()}
    while sum(taken.values()) > size:
        largest = max(taken, key=lambda name: (taken[name], name))
        taken[largest] -= 1
    for name in sorted(shares, key=lambda name: (shares[name] - int(shares[name]), name), reverse=True):
        if sum(taken.values()) >= size:
            break
        if taken[name] < len(strata[name]):
            taken[name] += 1
    generator = random.Random(seed)
    chosen = {id(record) for name in sorted(strata) for record in generator.sample(strata[name], min(taken[name], len(strata[name])))}
    return [record for record in records if id(record) in chosen]


def _picked(records: Sequence[ResultRecord], filters: Sequence[Filter], threshold: float, scale: float, flips: dict[str, dict[str, bool | None]]) -> list[ResultRecord]:
    if not filters:
        return list(records)
    kept = []
    for record in records:
        for chosen in filters:
            if chosen.name == "disagreement" and record.disagreement:
                break
            if chosen.name == "failed" and not record.ok:
                break
            if chosen.name == "near" and record.ok and record.score is not None:
                margin = chosen.margin if chosen.margin is not None else scale / 10
                if abs(record.score - threshold) <= margin + 1e-9:  # 0.55 is within 0.05 of 0.5, float rounding aside
                    break
            if chosen.name == "unsure" and (confidence := confidence_of(record.steps)) is not None:
                if confidence < (chosen.margin if chosen.margin is not None else UNSURE_BELOW):
                    break
            if chosen.name == "flips" and record.ok and record.score is not None:
                before = flips[str(chosen)].get(record.item_id)
                if before is not None and before != flags(record.score, threshold, record.direction):
                    break
        else:
            continue
        kept.append(record)
    return kept


def _least_sure(record: ResultRecord) -> tuple[bool, float]:
    """The order of least sure first: by the judge's confidence, items without one last."""
    confidence = confidence_of(record.steps)
    return confidence is None, confidence if confidence is not None else 0.0


def scorer_records(store: Store, run: str, scorer_id: str) -> list[ResultRecord]:
    """One scorer's records of a run, in the data's order."""
    found = store.query(run=run, scorer=scorer_id)
    return sorted(found, key=lambda record: (record.item_index if record.item_index is not None else 1 << 62, record.item_id))


def _verdicts_of(store: Store, run: RunInfo, scorer_id: str) -> dict[str, bool | None]:
    threshold = run_threshold(run, scorer_id)
    return {
        record.item_id: flags(record.score, threshold, record.direction) if record.ok and record.score is not None else None
        for record in scorer_records(store, run.name, scorer_id)
    }


def _labels_store(store: Store) -> KeepsLabels:
    if not isinstance(store, KeepsLabels):
        raise ConfigError(f"this results store ({type(store).__name__}) keeps no review queues; use an SQLite file or PostgreSQL")
    return store


def queue_from_run(
    store: Store,
    spec: QueueSpec,
    run: str,
    *,
    filters: Sequence[str] = (),
    sample: int | None = None,
    seed: int = 0,
    threshold: float | None = None,
    least_sure_first: bool = False,
) -> ReviewQueue:
    """Make the queue `spec.name` of the items of `run` scored by `spec.scorer` that the
    filters pick (then sampled; the least sure first when asked), keep it in the store, and
    return it."""
    labels = _labels_store(store)
    info = existing_run(store, run)
    records = scorer_records(store, run, spec.scorer)
    if not records:
        scorers = ", ".join(stats.scorer_id for stats in store.summary(run)) or "none"
        raise ConfigError(f"run {run!r} holds no result of {spec.scorer!r} (its scorers: {scorers})")
    parsed = [parse_filter(text) for text in filters]
    passing = run_line(info, spec.scorer, records[0].direction).overridden(threshold)
    line, scale = passing.value, passing.scale
    flips = {str(chosen): _verdicts_of(store, existing_run(store, chosen.other_run), spec.scorer) for chosen in parsed if chosen.other_run}
    picked = _picked(records, parsed, line, scale, flips)
    if sample is not None:
        if sample < 1:
            raise ConfigError(f"--sample must be at least 1, got {sample}")
        picked = stratified_sample(picked, sample, seed, line)
    if least_sure_first:  # stable: among equals, the data's order
        picked = sorted(picked, key=_least_sure)
    if not picked:
        raise ConfigError(f"no item of run {run!r} is picked by {', '.join(map(str, parsed))}: the queue would be empty")
    queue = ReviewQueue(
        name=spec.name, scorer_id=spec.scorer, source=f"run {run}", run=run, run_kind=info.kind, spec=spec.model_dump(mode="json"),
        threshold=line, direction=records[0].direction, scale=scale,
        picked_by=[*map(str, parsed), *([f"sample {sample} (seed {seed})"] if sample is not None else []), *(["least sure first"] if least_sure_first else [])],
    )
    items = [ReviewItem(queue=spec.name, item_id=record.item_id, position=position, fields=review_fields(record), judged=judged_of(record)) for position, record in enumerate(picked, start=1)]
    labels.create_queue(queue, items)
    return queue


def queue_from_file(
    store: Store, spec: QueueSpec, path: Path, *, line: PassLine, sample: int | None = None, seed: int = 0
) -> ReviewQueue:
    """Make the queue `spec.name` of the items of a JSONL file (no judge's view: people label
    them from scratch), keep it in the store, and return it."""
    labels = _labels_store(store)
    if not path.is_file():
        raise ConfigError(f"no data file {path}")
    items: list[tuple[str, EvalItem]] = []
    seen: set[str] = set()
    for number, raw in numbered_jsonl(path):
        try:
            item = EvalItem.of(raw)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"{path}: line {number}: {str(exc).splitlines()[0]}") from None
        item_id = item.id or item.key(number)
        if item_id in seen:
            raise ConfigError(f"{path}: line {number}: a second item with id {item_id!r}")
        seen.add(item_id)
        items.append((item_id, item))
    if not items:
        raise ConfigError(f"{path} holds no item")
    if sample is not None and sample < len(items):
        chosen = set(random.Random(seed).sample(range(len(items)), sample))
        items = [pair for position, pair in enumerate(items) if position in chosen]
    queue = ReviewQueue(
        name=spec.name, scorer_id=spec.scorer, source=f"file {path.name}", spec=spec.model_dump(mode="json"), threshold=line.value,
        direction=line.direction, scale=line.scale, picked_by=[f"sample {sample} (seed {seed})"] if sample is not None else [],
    )
    labels.create_queue(queue, [ReviewItem(queue=spec.name, item_id=item_id, position=position, fields=review_fields(item)) for position, (item_id, item) in enumerate(items, start=1)])
    return queue


def runs_offered(store: Store) -> Iterable[RunInfo]:
    """The stored runs a queue may be made from, newest first: a user's own runs (evals,
    live scoring, rescoring) before those the tools made for themselves (`scorers calibrate`'s,
    the workbench's samples)."""
    offered = [run for run in store.runs() if run.kind in ("batch", "live", "rescore", "workbench")]
    return sorted(offered, key=lambda run: run.kind == "workbench" or run.meta.get("made_by") == "calibrate")

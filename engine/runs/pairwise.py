"""Pairwise judging: a pairwise scorer (`pairwise: true` in its YAML) says which of two
outputs for one input is better. Each pair is judged in both orders, A shown first and then
B shown first, to cancel the judge's position bias; both verdicts are kept, and a pair whose
verdict changes with the order counts as a tie and is reported as inconsistent.

Pairs come from data items carrying `outputs: {a: ..., b: ...}`, or from two stored runs
whose items share ids (A: the first run's output, B: the second's)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..errors import ConfigError, DataError, NotScorable, ScorerError
from ..formatting import one_line
from ..scoring import AnyScorer, StepRecord
from ..scoring.transcripts import assistant_text
from ..store import ResultRecord, ScoreStats, Store, open_store
from ..sync import blocking
from .items import EvalItem, numbered_jsonl
from .results import FigureEstimate
from .measures.stats import bootstrap
from .batch.lease import Lease
from .identity import aclaim_run
from .stored.reading import existing_run, run_records
from .verdict import Standard, decide, judge_scorer
from .verdict import Verdict as RunVerdict

Side = Literal["a", "b"]
Verdict = Literal["a", "b", "tie"]


class OrderVerdict(BaseModel):
    """One judgement of a pair, in one order."""

    first: Side = Field(description="The side shown first")
    winner: Verdict | None = Field(default=None, description="None when the judgement failed")
    score: float | None = Field(default=None, description="The scorer's score: 1 the first shown is better, 0 the second, 0.5 a tie")
    reason: str | None = None
    error: str | None = None
    not_scorable: str | None = Field(default=None, description="Why the scorer could not judge the pair in this order (an empty output ...)")


class PairResult(BaseModel):
    item_id: str
    verdict: Verdict | None = Field(default=None, description="Both orders agreeing, else a tie; None when a judgement failed")
    consistent: bool | None = Field(default=None, description="Both orders gave the same verdict")
    orders: list[OrderVerdict] = Field(default_factory=list, description="A shown first, then B shown first")
    error: str | None = None
    not_scorable: str | None = Field(default=None, description="Why the pair could not be judged (no score, no error), as a scorer's not-scorable item")


class PairwiseSummary(BaseModel):
    """Win rates over the pairs judged, each with a bootstrap 95% interval; ties include
    the order-inconsistent pairs."""

    pairs: int = 0
    a_wins: int = 0
    b_wins: int = 0
    ties: int = 0
    inconsistent: int = Field(default=0, description="Pairs whose verdict changed with the order (counted as ties)")
    errors: int = 0
    not_scorable: int = Field(default=0, description="Pairs the scorer could not judge (an empty output ...): not errors, but not covered either")
    a_win_rate: FigureEstimate = Field(default_factory=lambda: FigureEstimate(value=None))
    b_win_rate: FigureEstimate = Field(default_factory=lambda: FigureEstimate(value=None))
    tie_rate: FigureEstimate = Field(default_factory=lambda: FigureEstimate(value=None))


class PairwiseResult(BaseModel):
    run: str | None = None
    scorer_id: str
    labels: dict[str, str] = Field(description="What A and B are (run names, or a and b)")
    summary: PairwiseSummary
    pairs: list[PairResult]
    verdict: RunVerdict = Field(description="Whether every pair was judged (runs/verdict.py): failed pairs fail it unless max_errors allows them")
    passed: bool = False


class Pair(BaseModel):
    """Two outputs for one item (its input, context, ground truth and metadata)."""

    item: EvalItem
    a: Any
    b: Any


def pairwise_summary(pairs: list[PairResult]) -> PairwiseSummary:
    judged = [pair for pair in pairs if pair.verdict is not None]
    summary = PairwiseSummary(
        pairs=len(judged), a_wins=sum(pair.verdict == "a" for pair in judged), b_wins=sum(pair.verdict == "b" for pair in judged),
        ties=sum(pair.verdict == "tie" for pair in judged), inconsistent=sum(pair.consistent is False for pair in judged),
        errors=sum(pair.error is not None for pair in pairs), not_scorable=sum(pair.not_scorable is not None for pair in pairs),
    )
    if judged:
        estimates = bootstrap(
            len(judged),
            lambda picked: {side: sum(judged[i].verdict == side for i in picked) / len(picked) for side in ("a", "b", "tie")},
        )
        summary.a_win_rate, summary.b_win_rate, summary.tie_rate = estimates["a"], estimates["b"], estimates["tie"]
    return summary


def pairs_from_items(data: str | Path | Iterable[Any]) -> list[Pair]:
    """Pairs from items carrying `outputs: {a: ..., b: ...}` (a JSONL file or a list)."""
    numbered = numbered_jsonl(data) if isinstance(data, (str, Path)) else enumerate(data, start=1)
    where = f"{data}:" if isinstance(data, (str, Path)) else "item "
    pairs = []
    for number, raw in numbered:
        if not isinstance(raw, Mapping):
            raise DataError(f"{where}{number}: an item must be an object with `outputs: {{a: ..., b: ...}}`" + (f" ({raw.message})" if hasattr(raw, "message") else ""))
        outputs = raw.get("outputs")
        if not isinstance(outputs, Mapping) or set(outputs) != {"a", "b"}:
            raise DataError(f"{where}{number}: `outputs` must be an object with exactly the keys a and b (the two outputs to compare)")
        try:
            item = EvalItem.of({key: value for key, value in raw.items() if key != "outputs"})
        except ValueError as exc:
            raise DataError(f"{where}{number}: {one_line(exc)}") from None
        pairs.append(Pair(item=item.model_copy(update={"id": item.id or str(number)}), a=outputs["a"], b=outputs["b"]))
    return pairs


def pairs_from_runs(store: Store, before: str, after: str) -> list[Pair]:
    """A: each item's output in run `before`, B: in run `after`, paired by item id."""
    outputs: list[dict[str, ResultRecord]] = []
    for run in (before, after):
        existing_run(store, run)
        found: dict[str, ResultRecord] = {}
        for records in run_records(store, run).values():
            for record in records:
                if record.output is not None and not record.content_note:
                    found.setdefault(record.item_id, record)
        outputs.append(found)
    shared = [item_id for item_id in outputs[0] if item_id in outputs[1]]
    if not shared:
        raise ConfigError(f"runs {before!r} and {after!r} share no item id with a stored output: nothing to pair")
    pairs = []
    for item_id in shared:
        first = outputs[0][item_id]
        item = EvalItem(id=item_id, input=first.input, context=first.context, ground_truth=first.ground_truth, metadata=first.metadata)
        pairs.append(Pair(item=item, a=first.output, b=outputs[1][item_id].output))
    return pairs


async def _judge(scorer: AnyScorer, pair: Pair, first: Side) -> tuple[OrderVerdict, dict[str, StepRecord]]:
    shown = (pair.a, pair.b) if first == "a" else (pair.b, pair.a)
    item = pair.item
    try:
        given = replace(item.run_input(shown[0], run_id=f"{item.id}:{first}-first"), metadata={**item.metadata, "second_output": assistant_text(shown[1])})
        result = await scorer.ascore(given)
    except NotScorable as exc:
        return OrderVerdict(first=first, not_scorable=str(exc)), {}
    except ScorerError as exc:
        return OrderVerdict(first=first, error=str(exc)), {}
    except Exception as exc:
        return OrderVerdict(first=first, error=one_line(exc)), {}
    other: Side = "b" if first == "a" else "a"
    winner: Verdict = first if result.score > 0.5 else other if result.score < 0.5 else "tie"
    return OrderVerdict(first=first, winner=winner, score=result.score, reason=result.reason), result.steps


def _combined(item_id: str, orders: list[OrderVerdict]) -> PairResult:
    failed = [order.error for order in orders if order.error is not None]
    if failed:
        return PairResult(item_id=item_id, orders=orders, error=failed[0])
    unscorable = [order.not_scorable for order in orders if order.not_scorable is not None]
    if unscorable:
        return PairResult(item_id=item_id, orders=orders, not_scorable=unscorable[0])
    consistent = orders[0].winner == orders[1].winner
    return PairResult(item_id=item_id, verdict=orders[0].winner if consistent else "tie", consistent=consistent, orders=orders)


def _record(scorer: AnyScorer, run: str, pair: Pair, result: PairResult, steps: list[dict[str, StepRecord]], started: datetime) -> ResultRecord:
    """One stored record per pair: the score is A's share of the verdict (1 A, 0 B, 0.5 a
    tie), both orders' verdicts are in its metadata and both orders' steps in its steps."""
    merged = {f"{order.first}_first.{step_id}": step for order, found in zip(result.orders, steps) for step_id, step in found.items()}
    usage = [step.usage for step in merged.values() if step.usage is not None]
    item = pair.item
    return ResultRecord(
        run=run, source="batch", item_id=item.id or "", scorer_id=scorer.id, scorer_hash=scorer.fingerprint, model=scorer.judge.model,
        score=None if result.verdict is None else {"a": 1.0, "b": 0.0, "tie": 0.5}[result.verdict],
        reason=" | ".join(f"{order.first.upper()} first: {order.reason}" for order in result.orders if order.reason),
        error=result.error, error_stage="scorer" if result.error else None, not_scorable=result.not_scorable, input=item.input, output={"a": pair.a, "b": pair.b},
        context=item.context, ground_truth=item.ground_truth,
        metadata={**item.metadata, "pairwise": result.model_dump(mode="json", exclude={"item_id"})}, steps=merged,
        prompt_tokens=sum(u.prompt_tokens for u in usage), completion_tokens=sum(u.completion_tokens for u in usage),
        total_tokens=sum(u.total_tokens for u in usage), started_at=started,
    ).scrubbed()


async def arun_pairwise(
    pairs: list[Pair],
    scorer: AnyScorer,
    *,
    labels: tuple[str, str] = ("a", "b"),
    store: Store | str | Path | None = None,
    run: str | None = None,
    concurrency: int = 4,
    max_errors: int | str | None = None,
    min_coverage: float = 1.0,
) -> PairwiseResult:
    """Judge every pair in both orders with a pairwise scorer; with `store`, each pair is
    saved as one record of run `run` (its score A's share of the verdict). `passed` and
    `verdict` say whether every pair was judged, as for any run: a pair whose judgement failed
    fails the run unless `max_errors` allows it (and `min_coverage` is lowered to match)."""
    plan = getattr(scorer, "plan", None)
    if not getattr(plan, "pairwise", False):
        raise ConfigError(f"{scorer.id} judges one output, not two: give a pairwise scorer (one with `pairwise: true` in its YAML)")
    if concurrency < 1:
        raise ConfigError("concurrency must be at least 1")
    standard = Standard.of(min_coverage=min_coverage, max_errors=max_errors)
    opened = open_store(store)
    name = run or f"pairwise-{scorer.id}-{datetime.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:4]}"
    if opened is not None:
        meta = {"pairwise": {"scorer": scorer.id, "a": labels[0], "b": labels[1], "pairs": len(pairs)}, "scorers": {scorer.id: {}}}
        started = {"pairs": sorted(pair.item.id or "" for pair in pairs), "scorers": {scorer.id: scorer.fingerprint}, "labels": list(labels)}

        def differences(before: Mapping[str, Any] | None) -> list[str]:
            return ["it judged other pairs, or with another scorer"] if before is not None and dict(before) != started else []

        # One process at a time, as for eval: a second pairwise of the same run at once was
        # judging every pair again beside the first (twice the calls, one stored result each).
        lease = Lease(opened, name)
        try:
            await asyncio.to_thread(lease.take)
            try:
                await aclaim_run(opened, name, "pairwise", started_with=started, meta=meta, differences=differences)
            except BaseException:
                lease.release()
                raise
        except BaseException:
            if opened is not store:
                opened.close()
            raise
        lease.keep_renewing()
    slots = asyncio.Semaphore(concurrency)

    async def one(pair: Pair) -> PairResult:
        async with slots:
            started = datetime.now(timezone.utc)
            judged = await asyncio.gather(_judge(scorer, pair, "a"), _judge(scorer, pair, "b"))
            result = _combined(pair.item.id or "", [order for order, _ in judged])
            if opened is not None:
                await asyncio.to_thread(opened.save, _record(scorer, name, pair, result, [steps for _, steps in judged], started))
            return result

    try:
        results = list(await asyncio.gather(*(one(pair) for pair in pairs)))
        if opened is not None:
            await asyncio.to_thread(opened.end_run, name, "complete" if all(result.error is None for result in results) else "incomplete")
    finally:
        if opened is not None:
            lease.release()
            if opened is not store:
                opened.close()
    summary = pairwise_summary(results)
    judged = judge_scorer(ScoreStats(scorer_id=scorer.id, count=summary.pairs, errors=summary.errors, not_scorable=summary.not_scorable), None, standard)
    verdict = decide([judged], standard, items=len(results), failed_items=summary.errors)
    return PairwiseResult(
        run=name if opened is not None else None, scorer_id=scorer.id, labels={"a": labels[0], "b": labels[1]},
        summary=summary, pairs=results, verdict=verdict, passed=verdict.passed,
    )


run_pairwise = blocking(arun_pairwise)

"""Pairwise judging: a pairwise scorer (`pairwise: true` in its YAML) says which of two
outputs for one input is better. Each pair is judged in both orders, A shown first and then
B shown first, to cancel the judge's position bias; both verdicts are kept, and a pair whose
verdict changes with the order counts as a tie and is reported as inconsistent.

Pairs come from data items carrying `outputs: {a: ..., b: ...}`, or from two stored runs
whose items share ids (A: the first run's output, B: the second's).

A stored pairwise run is resumable: the same command again reuses the pairs it judged and
judges the rest. Under a budget (`max_cost`) every judge call of the run, both orders of every
pair, goes through one spend limit (judge/middleware/budget.py, given the run's stored spend
by batch/budget.py as for eval); a pair the budget kept from the judge is neither judged nor
stored, and the run ends interrupted, to be resumed."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..errors import BudgetReached, ConfigError, DataError, NotScorable, ScorerError
from ..formatting import one_line
from ..judge.prices import price_table
from ..scoring import AnyScorer, StepRecord
from ..scoring.assembly import within_budget
from ..scoring.transcripts import assistant_text
from ..store import ResultRecord, RunStatus, ScoreStats, Store, open_store
from ..sync import blocking
from .items import EvalItem, numbered_jsonl
from .results import FigureEstimate
from .measures.stats import bootstrap
from .batch.budget import RunBudget
from .batch.lease import Lease
from .identity import aclaim_run
from .stored.reading import existing_run, run_records
from .verdict import Standard, decide, judge_scorer
from .verdict import Verdict as RunVerdict

Side = Literal["a", "b"]
#: How often a pair waiting for the pairs in flight to settle looks at the budget again (seconds).
_WAITING = 0.02
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
    not_judged: int = Field(default=0, description="Pairs the budget (max_cost) kept from the judge: not judged, not stored; a rerun judges them")
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
    stopped: str | None = Field(default=None, description="Why the run stopped before judging every pair (the budget), else None")
    reused: int = Field(default=0, description="Pairs judged by an earlier invocation of the stored run, read back instead of judged again")


class Pair(BaseModel):
    """Two outputs for one item (its input, context, ground truth and metadata)."""

    item: EvalItem
    a: Any
    b: Any


def pairwise_summary(pairs: list[PairResult], not_judged: int = 0) -> PairwiseSummary:
    judged = [pair for pair in pairs if pair.verdict is not None]
    summary = PairwiseSummary(
        pairs=len(judged), not_judged=not_judged, a_wins=sum(pair.verdict == "a" for pair in judged), b_wins=sum(pair.verdict == "b" for pair in judged),
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
    except BudgetReached:  # not a verdict on the pair: the run has no money left for it
        raise
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


def _pair_cost(record: ResultRecord) -> float:
    """What a pair's judge calls cost (both orders), at the prices the budget holds them to."""
    table = price_table()
    return sum(table.cost(record.model or "", step.usage, step.batch) or 0.0 for step in record.steps.values() if step.usage is not None)


def _judged_before(store: Store, run: str, scorer: AnyScorer) -> dict[str, PairResult]:
    """The pairs an earlier invocation of `run` judged (or found not scorable) with this
    scorer, by item id: a rerun reads them back instead of paying for them again."""
    kept: dict[str, PairResult] = {}
    for record in store.query(run=run, scorer=scorer.id, errors=False):
        judged = record.metadata.get("pairwise") if record.scorer_hash == scorer.fingerprint else None
        if isinstance(judged, Mapping):
            kept[record.item_id] = PairResult.model_validate({**judged, "item_id": record.item_id})
    return kept


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
    max_cost: float | None = None,
) -> PairwiseResult:
    """Judge every pair in both orders with a pairwise scorer; with `store`, each pair is
    saved as one record of run `run` (its score A's share of the verdict), and the same call
    again resumes the run: the pairs it judged are read back, the rest judged. `passed` and
    `verdict` say whether every pair was judged, as for any run: a pair whose judgement failed
    fails the run unless `max_errors` allows it (and `min_coverage` is lowered to match).
    `max_cost` (US dollars) is the run's budget across its invocations: no judge call leaves
    that could take the run's spend past it; the pairs it kept from the judge are counted
    (`summary.not_judged`), the run stops (`stopped`) and does not pass."""
    plan = getattr(scorer, "plan", None)
    if not getattr(plan, "pairwise", False):
        raise ConfigError(f"{scorer.id} judges one output, not two: give a pairwise scorer (one with `pairwise: true` in its YAML)")
    if concurrency < 1:
        raise ConfigError("concurrency must be at least 1")
    if max_cost is not None and not max_cost > 0:
        raise ConfigError(f"max_cost must be a positive number of US dollars, got {max_cost!r}", parameter="max_cost")
    standard = Standard.of(min_coverage=min_coverage, max_errors=max_errors)
    name = run or f"pairwise-{scorer.id}-{datetime.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:4]}"
    budget = RunBudget(max_cost, None, name)
    judging = within_budget(scorer, budget.limit)  # refuses a judge without a price before anything is opened
    opened = budget.store = open_store(store)
    judged_before: dict[str, PairResult] = {}
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
                claimed = await aclaim_run(opened, name, "pairwise", started_with=started, meta=meta, differences=differences)
                if claimed.resumed:
                    judged_before = await asyncio.to_thread(_judged_before, opened, name, scorer)
                # A resumed run's budget counts what its earlier invocations spent.
                await budget.start(claimed.resumed)
            except BaseException:
                lease.release()
                raise
        except BaseException:
            if opened is not store:
                opened.close()
            raise
        lease.keep_renewing()
    slots = asyncio.Semaphore(concurrency)
    judging_now = [0]  # pairs whose orders are with the judge

    async def one(pair: Pair) -> PairResult | None:
        """The pair's result; None when the budget kept it (or one of its orders) from the judge."""
        if pair.item.id in judged_before:
            return judged_before[pair.item.id or ""]
        async with slots:
            # Money goes to finishing pairs: one starts only while what is left covers it
            # beside the pairs in flight (the first goes alone: a pair's cost is not known yet).
            while judging_now[0] and not budget.room_for_another(judging_now[0]):
                await asyncio.sleep(_WAITING)
            if budget.hold_back():
                return None
            if not budget.room_for_another(judging_now[0]):
                budget.out_of_room()
                return None
            started = datetime.now(timezone.utc)
            judging_now[0] += 1
            try:
                judged = await asyncio.gather(_judge(judging, pair, "a"), _judge(judging, pair, "b"), return_exceptions=True)
            finally:
                judging_now[0] -= 1
            refused = [outcome for outcome in judged if isinstance(outcome, BaseException)]
            if refused:
                if all(isinstance(outcome, BudgetReached) for outcome in refused):
                    return None  # half a pair is no verdict: it is judged again when the run is resumed
                raise refused[0]
            orders = [outcome for outcome in judged if not isinstance(outcome, BaseException)]
            result = _combined(pair.item.id or "", [order for order, _ in orders])
            record = _record(scorer, name, pair, result, [steps for _, steps in orders], started)
            budget.item_judged(_pair_cost(record))
            if opened is not None:
                await asyncio.to_thread(opened.save, record)
            return result

    try:
        outcomes = list(await asyncio.gather(*(one(pair) for pair in pairs)))
        results = [outcome for outcome in outcomes if outcome is not None]
        stopped = budget.stopped(budget.limit.total if budget.limit is not None else None, unit="pair")
        if opened is not None:
            status: RunStatus = "interrupted" if stopped is not None else "complete" if all(result.error is None for result in results) else "incomplete"
            await asyncio.to_thread(opened.end_run, name, status)
    finally:
        if opened is not None:
            lease.release()
            if opened is not store:
                opened.close()
    summary = pairwise_summary(results, not_judged=len(outcomes) - len(results))
    judged = judge_scorer(ScoreStats(scorer_id=scorer.id, count=summary.pairs, errors=summary.errors, not_scorable=summary.not_scorable), None, standard)
    verdict = decide([judged], standard, items=len(results), failed_items=summary.errors, stopped=stopped)
    return PairwiseResult(
        run=name if opened is not None else None, scorer_id=scorer.id, labels={"a": labels[0], "b": labels[1]},
        summary=summary, pairs=results, verdict=verdict, passed=verdict.passed, stopped=stopped, reused=sum(pair.item.id in judged_before for pair in pairs),
    )


run_pairwise = blocking(arun_pairwise)

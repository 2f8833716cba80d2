"""The run's lifecycle: check the arguments, open the cache and the store, take the lease,
begin (or resume) the run, drive its items, end it with a status, and sum it up."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from ...errors import ConfigError, StoreError
from ...judge import Chain, ResponseCache
from ...judge.middleware.slots import CallSlots
from ...judge.sent import SentRequests, counting
from ...scoring import AnyScorer, Jury, Scorer, each_judge
from ...store import RunStatus, SharesWork, Store, open_store, store_location
from ..items import Data, NumberedSource, data_source, numbered
from ..results import CALLS_SENT, EvalResult, calls_sent
from .shared import drive_shared
from ..measures.stats import unpriced_models
from ..identity import aclaim_run
from ..verdict import decide
from ..targets import Target
from .budget import RunBudget
from .evaluation import Evaluation, Stopped
from .lease import Lease
from .options import Limits, Pace, Saving
from .resume import resume_differences, started_with
from .tally import ItemCallback, Tally
from .writes import BatchedWrites

logger = logging.getLogger("engine.evals")

CacheChoice = ResponseCache | str | Path | bool | None


def default_run_name(prefix: str = "run") -> str:
    return f"{prefix}-{datetime.now().strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:4]}"


def check_scorers(scorers: Sequence[AnyScorer] | AnyScorer) -> list[AnyScorer]:
    listed = [scorers] if isinstance(scorers, (Scorer, Jury)) else list(scorers)
    if not listed:
        raise ConfigError("run_evals needs at least one scorer")
    for scorer in listed:
        if not isinstance(scorer, (Scorer, Jury)):
            raise ConfigError(f"scorers must be Scorer or Jury objects (create_scorer(...)), got {type(scorer).__name__}")
        if scorer.plan.pairwise:  # its template needs the second output, which only a pair has
            raise ConfigError(f"{scorer.id} judges two outputs: run it with run_pairwise (`scorers pairwise DATA --scorer {scorer.id}`)")
    ids = [scorer.id for scorer in listed]
    duplicated = sorted({scorer_id for scorer_id in ids if ids.count(scorer_id) > 1})
    if duplicated:
        raise ConfigError(f"results are keyed by scorer id, and {', '.join(duplicated)} appears more than once")
    return listed


def _checked(scorers: Sequence[AnyScorer] | AnyScorer, target: Target | None, limits: Limits) -> list[AnyScorer]:
    """The scorers, once every argument is known to be usable: nothing is called before."""
    listed = check_scorers(scorers)
    if limits.max_cost is not None:
        unpriced = sorted({model for scorer in listed if scorer.plan.needs_judge for model in unpriced_models(scorer)})
        if unpriced:
            raise ConfigError(f"max_cost needs a price for {', '.join(unpriced)}; add it to your prices file (see docs/performance.md)")
    thresholds = limits.standard.thresholds
    unknown = sorted(set(thresholds) - {scorer.id for scorer in listed})
    if unknown:
        raise ConfigError(f"threshold for {', '.join(unknown)}, which is not among the scorers of this run")
    for scorer in listed:
        judge = scorer.scorers[0] if isinstance(scorer, Jury) else scorer  # a jury's judges share the plan and options
        if (off := judge.plan.threshold_off_scale(thresholds.get(scorer.id), judge.options)) is not None:
            raise ConfigError(f"threshold for {scorer.id}: {off}")
    if target is not None and not (callable(target) or hasattr(target, "generate") or hasattr(target, "agenerate")):
        raise ConfigError(f"target must be a callable or have a generate/agenerate method, got {type(target).__name__}")
    return listed


def _through(scorer: AnyScorer, slots: CallSlots, cache: ResponseCache | None, budget: RunBudget) -> AnyScorer:
    """`scorer` (or each judge of a jury) asking through `cache`, then, for the calls the
    cache does not answer, through the run's bound on calls in flight and, once a call has
    its slot and is about to leave, through the run's spend limit."""

    def wrapped(member: Scorer) -> Scorer:
        spending = [budget.limit.for_model(member.judge.model)] if budget.limit is not None else []
        bounded = Chain(member.judge, [slots, *spending])
        return member.with_judge(cache.wrap(bounded) if cache is not None else bounded)

    return each_judge(scorer, wrapped)


def _total_cost(summaries: Iterable[Any]) -> float | None:
    costs = [summary.cost_usd for summary in summaries if summary.judge_calls]
    return None if any(cost is None for cost in costs) else sum(costs)


async def evaluate(
    data: Data,
    scorers: Sequence[AnyScorer] | AnyScorer,
    target: Target | None,
    on_item_complete: ItemCallback | None,
    *,
    pace: Pace,
    limits: Limits,
    saving: Saving,
    cache: CacheChoice,
) -> EvalResult:
    """`arun_evals` with its options grouped."""
    listed = _checked(scorers, target, limits)
    if pace.reasons != "always":
        listed = [each_judge(scorer, lambda member: member.with_reasons(pace.reasons, limits.standard.thresholds.get(member.id))) for scorer in listed]
    # Opening a cache in a database, and starting its session, are round trips: off the loop.
    response_cache = await asyncio.to_thread(ResponseCache.of, cache)
    if response_cache is not None:
        await asyncio.to_thread(response_cache.new_session)
    # The one bound of the run: every judge call and every target call holds a slot while
    # it is in flight, whichever item it is for.
    slots = CallSlots(pace.concurrency)
    source = data_source(data)
    opened = open_store(saving.store)
    budget = RunBudget(limits.max_cost, opened, saving.run or default_run_name())
    listed = [_through(scorer, slots, response_cache, budget) for scorer in listed]
    batch = BatchRun(data, listed, target, on_item_complete, pace=pace, limits=limits, saving=saving, store=opened, slots=slots, budget=budget)
    try:
        await batch.run(source)
    finally:
        if opened is not None and opened is not saving.store:
            opened.close()
        if response_cache is not None:
            response_cache.flush()
    return batch.result()


class BatchRun:
    """One invocation of a run, from its beginning in the store to its result."""

    def __init__(
        self,
        data: Data,
        scorers: list[AnyScorer],
        target: Target | None,
        on_item_complete: ItemCallback | None,
        *,
        pace: Pace,
        limits: Limits,
        saving: Saving,
        store: Store | None,
        slots: CallSlots,
        budget: RunBudget,
    ) -> None:
        self.slots = slots
        self.data = data
        self.scorers = scorers
        self.target = target
        self.pace = pace
        self.limits = limits
        self.saving = saving
        self.store = store
        self.name = budget.run
        self.shared = saving.share_work and isinstance(store, SharesWork)
        self.tally = Tally(scorers, limits.standard, pace.keep_results, on_item_complete)
        self.writes = BatchedWrites(store, self.tally.store_failed, self.tally.store_gave_up) if store is not None else None
        self.budget = budget
        budget.flush = self.writes.flush if self.writes is not None else None
        self.status: RunStatus = "failed"
        self.clock = time.perf_counter()
        self.evaluation: Evaluation | None = None
        #: The judge calls this invocation sent, answered or not (judge/sent.py), and the
        #: stored run's in all once it ended (its reused results were paid for before).
        self.sent = SentRequests()
        self.run_sent: int | None = None

    async def run(self, source: NumberedSource) -> None:
        with counting() as self.sent:
            await self._run(source)

    async def _run(self, source: NumberedSource) -> None:
        lease: Lease | None = None
        try:
            if self.store is not None and self.saving.share_work and not self.shared:
                # One process at a time, unless workers split the run on purpose: through a store
                # that shares work, or by the caller (share_work=False, as the Ray adapter does).
                lease = Lease(self.store, self.name)
                await asyncio.to_thread(lease.take)
            resuming, ended_before = await self._begin() if self.store is not None else (False, False)
            await self.budget.start(resuming)
            if lease is not None:
                lease.keep_renewing()
            self.evaluation = Evaluation(
                scorers=self.scorers, target=self.target, pace=self.pace, run=self.name, store=self.store, resuming=resuming,
                tally=self.tally, budget=self.budget, writes=self.writes, slots=self.slots,
                track_items=resuming and isinstance(self.data, (str, Path)),
            )
            await self._score_all(self.evaluation, source, ended_before)
        finally:
            if lease is not None:
                lease.release()

    async def _begin(self) -> tuple[bool, bool]:
        """Begin the run in the store, or resume it: (resuming, it had ended before)."""
        assert self.store is not None
        now = started_with(self.data, self.saving.meta, self.scorers)
        claimed = await aclaim_run(
            self.store, self.name, self.saving.kind, started_with=now, meta=self._run_meta(now), replace=self.saving.replace,
            differences=lambda before: resume_differences(before, now, self.scorers),
        )
        resuming = claimed.resumed or self.shared  # other workers may be saving into it now
        return resuming, claimed.ended_before

    def _run_meta(self, now: dict[str, Any]) -> dict[str, Any]:
        standard = self.limits.standard
        lines = {scorer.id: standard.line_for(scorer.id, scorer.pass_line) for scorer in self.scorers}
        thresholds = {scorer_id: line.gate for scorer_id, line in lines.items() if line.gate is not None}
        scorers = {
            scorer.id: {
                "hash": scorer.fingerprint,
                "definition": scorer.plan.fingerprint,
                "model": scorer.judge.model,
                # Where a score flags an item: a stored run is measured again the same way.
                "flag_threshold": lines[scorer.id].value,
                "scale": lines[scorer.id].scale,  # how its labels are read (read_label)
            }
            for scorer in self.scorers
        }
        sample = {"sample": self.pace.sample} if self.pace.sample else {}
        return {**dict(self.saving.meta or {}), "scorers": scorers, "concurrency": self.pace.concurrency,
                "thresholds": thresholds, "standard": standard.model_dump(mode="json"), **sample}

    async def _score_all(self, evaluation: Evaluation, source: NumberedSource, ended_before: bool) -> None:
        """Drive every item, and decide the run's status (also when it is interrupted)."""
        writes = self.writes
        flusher = asyncio.create_task(writes.periodically()) if writes is not None else None
        try:
            if self.shared:
                await self._drive_shared(evaluation, source, ended_before)
            else:
                await drive(evaluation, source, self.pace.concurrency)
            if writes is not None:
                await writes.flush()  # a result that cannot be saved decides the status too
                self.tally.settle_unsaved()
            self.status = self._ended_status(evaluation)
            if self.status != "interrupted" and self.status != "failed" and self.store is not None:
                if evaluation.seen is not None and not self.shared:
                    await self._prune(evaluation.seen)
        except (asyncio.CancelledError, KeyboardInterrupt):
            self.status = "interrupted"
            raise
        finally:
            if flusher is not None:
                flusher.cancel()
            if writes is not None:
                writes.flush_now()
            self._end()

    async def _prune(self, seen: set[str]) -> None:
        """A whole pass over the run's own data file: results of items that are no longer in
        it (removed, or now with another id) would skew the run."""
        assert self.store is not None
        try:
            await asyncio.to_thread(self.store.prune_run, self.name, seen)
        except StoreError as exc:  # they stay; the next whole pass drops them
            logger.warning("could not drop the results of items no longer in the data: %s", exc.message)

    async def _drive_shared(self, evaluation: Evaluation, source: NumberedSource, ended_before: bool) -> None:
        assert isinstance(self.store, SharesWork)

        mine: set[int] = set()

        async def score_claimed(index: int, raw: Any) -> None:
            mine.add(index)
            await evaluation.item(index, index + 1, raw)

        async def stop_claiming() -> bool:
            # As the local driver stops starting items: once the judge or the store has
            # stopped the run (a failing save would otherwise be paid for item after item).
            return self._stop() is not None or await self.budget.reached_by_all()

        await drive_shared(
            self.store, self.name, source, score_claimed, concurrency=self.pace.concurrency, rerun=ended_before,
            lease_s=self.saving.lease_seconds, stop_claiming=stop_claiming, save=self.writes.flush if self.writes is not None else None,
        )
        # The run is scored whole when a worker's command ends: its result says so, with the
        # items the others finished loaded from the store (a worker that claimed none would
        # otherwise report "nothing was scored" for a complete run, and calibrate or compare
        # would measure its share only). Data read once (an iterator) keeps the worker's own.
        if self._stop() is None and not self.budget.reached() and isinstance(self.data, (str, Path, list, tuple)):
            if await asyncio.to_thread(self.store.unfinished, self.name) == 0:
                async for index, _, raw in numbered(data_source(self.data)):
                    if index not in mine:
                        await evaluation.finished_elsewhere(index, index + 1, raw)

    def _stop(self) -> Exception | None:
        """What stopped the run, if anything did: the judge, or a store that keeps failing."""
        cause = self.evaluation.stop_cause if self.evaluation is not None else None
        return cause or self.tally.store_failure

    def _ended_status(self, evaluation: Evaluation) -> RunStatus:
        if self._stop() is not None:
            return "failed"
        if self.budget.reached():
            return "interrupted"  # the budget: resumable like Ctrl-C
        return "incomplete" if self.tally.counts.failed else "complete"

    def _end(self) -> None:
        self.tally.settle_unsaved()
        if self.store is None:
            return
        if self.shared:
            self.budget.read_run_spend()
        counts, cause = self.tally.counts, self._stop()
        last = {
            "status": self.status, "reused": counts.reused, "judged": counts.scored, "items": counts.items,
            "failed": counts.failed, "stopped_by": str(cause) if cause is not None else None, CALLS_SENT: self.sent.requests,
        }
        try:
            self.store.end_run(self.name, self.status, meta={"last_invocation": last}, added={CALLS_SENT: self.sent.requests})
            stored = self.store.get_run(self.name)
            self.run_sent = calls_sent(stored) if stored is not None else None
        except StoreError as exc:  # the run's figures are still reported
            logger.warning("could not mark run %r %s in the store: %s", self.name, self.status, exc.message)

    def result(self) -> EvalResult:
        tally, cause = self.tally, self._stop()
        judged = {scorer_id: aggregate.summary() for scorer_id, aggregate in tally.aggregates.items()}
        summary = {scorer_id: figures for scorer_id, (figures, _) in judged.items()}
        cost = _total_cost(summary.values())
        stopped = self.budget.stopped(cost, shared=self.shared)
        verdict = decide(
            [scorer_verdict for _, scorer_verdict in judged.values()], self.limits.standard, items=tally.counts.items, failed_items=tally.counts.failed,
            stopped_by=str(cause) if cause is not None else None, stopped=stopped,
        )
        return EvalResult(
            run=self.name,
            store=store_location(self.store) if self.store is not None else None,
            status=self.status,
            scores={scorer_id: item.mean for scorer_id, item in summary.items()},
            summary=summary,
            counts=tally.counts,
            errors=tally.errors,
            not_scorable=tally.not_scorable,
            stopped_by=str(cause) if cause is not None else None,
            stopped_by_kind=type(cause).__name__ if cause is not None else None,
            max_errors=verdict.max_errors,
            items=tally.in_order(),
            verdict=verdict,
            passed=verdict.passed,
            duration_s=time.perf_counter() - self.clock,
            cost_usd=cost,
            stopped=stopped,
            judge_calls_sent=self.run_sent if self.run_sent is not None else self.sent.requests,
        )


async def drive(evaluation: Evaluation, source: NumberedSource, concurrency: int) -> None:
    """Start items as they are read, at most twice `concurrency` of them in progress: while
    some wait for an answer, the others' calls keep every call slot busy (a sequential
    3-step scorer at concurrency 64 fills its rounds of 64 calls as a bare loop of
    independent calls does), and a huge data file is never held in memory."""
    window = asyncio.Semaphore(concurrency * 2)
    running = evaluation.tasks
    failure: list[BaseException] = []

    def done(task: asyncio.Task[None]) -> None:
        running.discard(task)
        window.release()
        if not task.cancelled() and task.exception() is not None and not isinstance(task.exception(), Stopped):
            failure.append(task.exception())  # type: ignore[arg-type]

    try:
        async for index, line, raw in numbered(source):
            await window.acquire()
            # Under a budget, an item starts only when what is left covers it beside the items
            # in flight: money goes to finishing items, not to first steps of many.
            while running and not evaluation.budget.room_for_another(len(running)):
                await asyncio.wait(set(running), return_when=asyncio.FIRST_COMPLETED)
            if failure or evaluation.stop_cause is not None or evaluation.tally.store_failure is not None or evaluation.budget.reached():
                break
            if not evaluation.budget.room_for_another(len(running)):
                evaluation.budget.out_of_room()
                break
            task = asyncio.create_task(evaluation.item(index, line, raw))
            running.add(task)
            task.add_done_callback(done)
        while running:
            await asyncio.wait(set(running))
        if failure:  # item failures are recorded, so only a bug of ours gets here
            raise failure[0]
    finally:
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)

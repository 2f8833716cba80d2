"""Batch evaluation: score every item of a data set with several scorers, concurrently.

    result = run_evals(
        data="examples/halueval_qa.jsonl",        # a list, any iterable, or a JSONL path
        scorers=[create_hallucination_scorer()],
        target=agent,                             # optional: items without `output` need it
        store="results.sqlite", run="nightly",    # optional: saved as it goes, resumable
        thresholds={"hallucination": 0.2},        # optional: a pass/fail verdict for CI
    )
    result.scores        # {"hallucination": 0.15}: the mean per scorer id
    result.passed        # True / False (None without thresholds)

One bound (`concurrency`) limits how many target calls and scorer runs are in flight at
once, over all items and scorers. Items are read lazily from the data, a bounded window
ahead, so a JSONL file of any size streams in constant memory (keep_results=False also
drops the per-item results and keeps only the aggregates). The per-item results keep the
order of the input. A failing item (unreadable, target error, judge error) is recorded
with its cause and never stops the others.

With a store, every (item, scorer) result is saved as it completes, in batches (one
transaction per up to 64 results or half a second). Running a run of the same name again
(after a crash, Ctrl-C, or judge errors) loads what is saved and scores only what is missing;
an item's identity is its `id`, else a hash of its content. The judge's answers go through a
response cache (on by default here): a hard crash loses at most the last batch of results,
and scoring those again costs nothing.

Tokens and their estimated cost are summed per scorer; `max_cost` stops a run cleanly (no
new items are started; the run is resumable) once this invocation's spend reaches it.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import logging
import time
import uuid
from collections.abc import (
    AsyncIterable,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import ConfigError, ScorerError
from ..formatting import one_line, validation_line
from ..judge import ResponseCache
from ..scoring import AnyScorer, Jury, Scorer
from ..store import ResultRecord, RunInfo, SharesWork, Stage, Store, open_store, store_location
from ..sync import run_sync
from .items import Data, EvalItem, UnreadableItem, data_source, numbered
from .records import outcome_of, result_record
from .results import EvalCounts, EvalError, EvalResult, ItemResult, ScorerOutcome
from .shared import drive_shared
from .stats import Aggregate, flag_threshold, price_of
from .targets import Target, as_reply, call_target

logger = logging.getLogger("engine.evals")

ItemCallback = Callable[[ItemResult], None | Awaitable[None]]
CacheChoice = ResponseCache | str | Path | bool | None


class _BatchedWrites:
    """Results on their way to the store: written together, one transaction per batch, when
    `size` are waiting or every `every` seconds, and all of them when the run ends."""

    def __init__(self, store: Store, failed: Callable[[ResultRecord, BaseException], None], size: int = 64, every: float = 0.5) -> None:
        self.store = store
        self.failed = failed
        self.size = size
        self.every = every
        self.waiting: list[ResultRecord] = []
        self._lock = asyncio.Lock()

    async def add(self, record: ResultRecord) -> None:
        self.waiting.append(record)
        if len(self.waiting) >= self.size:
            await self.flush()

    async def flush(self) -> None:
        async with self._lock:
            batch, self.waiting = self.waiting, []
            if batch:
                try:
                    # On a worker thread: a write waiting on another process's lock must not
                    # stall the loop. If this task is cancelled meanwhile, the write still completes.
                    await asyncio.to_thread(self.store.save_many, batch)
                except Exception as exc:
                    for record in batch:
                        self.failed(record, exc)

    async def periodically(self) -> None:
        while True:
            await asyncio.sleep(self.every)
            await self.flush()

    def flush_now(self) -> None:
        """The last write, at the end of a run (also when it is interrupted)."""
        batch, self.waiting = self.waiting, []
        if batch:
            try:
                self.store.save_many(batch)
            except Exception as exc:
                for record in batch:
                    self.failed(record, exc)


class _Evaluation:
    """One invocation of a batch run: reads items, scores them, records every outcome."""

    def __init__(
        self,
        *,
        scorers: list[AnyScorer],
        target: Target | None,
        on_item_complete: ItemCallback | None,
        concurrency: int,
        run: str,
        store: Store | None,
        resuming: bool,
        thresholds: Mapping[str, float],
        keep_results: bool,
        target_timeout: float | None,
        max_cost: float | None = None,
        sample: int = 0,
    ) -> None:
        self.scorers = scorers
        self.sample = sample
        self.target = target
        self.on_item_complete = on_item_complete
        self.run = run
        self.store = store
        self.resuming = resuming
        self.keep_results = keep_results
        self.target_timeout = target_timeout
        # The one bound: every target call and every scorer run holds a slot while it runs.
        self.slots = asyncio.Semaphore(concurrency)
        self.aggregates = {scorer.id: Aggregate(scorer, thresholds.get(scorer.id)) for scorer in scorers}
        self.counts = EvalCounts()
        self.errors: list[EvalError] = []
        self.items: dict[int, ItemResult] = {}
        self.writes = _BatchedWrites(store, self._store_failed) if store is not None else None
        self.max_cost = max_cost
        self.spent = 0.0  # estimated US dollars of the judge calls made by this invocation
        self.stopped: str | None = None

    def _store_failed(self, record: ResultRecord, exc: BaseException) -> None:
        self._error(record.item_index or 0, record.item_id, "store", one_line(exc), record.scorer_id)

    def over_budget(self) -> bool:
        if self.max_cost is not None and self.spent >= self.max_cost:
            self.stopped = f"the estimated spend ${self.spent:.4f} reached the budget of ${self.max_cost:g} (--max-cost)"
            return True
        return False

    def _error(self, index: int, item_id: str | None, stage: Stage, error: str, scorer_id: str | None = None) -> None:
        self.errors.append(EvalError(index=index, item_id=item_id, scorer_id=scorer_id, stage=stage, error=error))
        logger.warning("item %d (%s)%s: %s failed: %s", index, item_id or "unread", f" {scorer_id}" if scorer_id else "", stage, error)

    async def _save(self, record: ResultRecord) -> None:
        if self.writes is not None:
            await self.writes.add(record)

    async def item(self, index: int, raw: Any) -> None:
        self.counts.items += 1
        if isinstance(raw, UnreadableItem):
            await self._finish(ItemResult(index=index, id=None, error=raw.message), "item")
            return
        try:
            item = EvalItem.of(raw)
        except (ValidationError, ValueError) as exc:
            message = validation_line(exc) if isinstance(exc, ValidationError) else str(exc)
            await self._finish(ItemResult(index=index, id=None, error=message), "item")
            return
        key = item.key
        outcomes: dict[str, ScorerOutcome] = {}
        stored_output: Any = None
        if self.resuming and self.store is not None:
            for record in await asyncio.to_thread(self.store.item_records, self.run, key):
                if record.ok and record.scorer_id in self.aggregates:
                    outcomes[record.scorer_id] = outcome_of(record, resumed=True)
                if record.output is not None and record.error_stage != "target":
                    stored_output = record.output
        pending = [scorer for scorer in self.scorers if scorer.id not in outcomes]
        result = ItemResult(index=index, id=key, item=item, output=stored_output, resumed=not pending)
        if pending:
            started = datetime.now(timezone.utc)
            reply, error = await self._reply(item, stored_output)
            result.output = reply
            if error is not None:
                result.error = error
                for scorer in pending:
                    record = self._record(scorer, item, key, index, reply, started, error=error, stage="target")
                    await self._save(record)
                    outcomes[scorer.id] = outcome_of(record)
            else:
                scored = await asyncio.gather(*(self._score(scorer, item, key, index, reply) for scorer in pending))
                outcomes.update((outcome.scorer_id, outcome) for outcome in scored)
        # In the scorers' order, whatever order they finished or were loaded in.
        result.results = {scorer.id: outcomes[scorer.id] for scorer in self.scorers}
        await self._finish(result, "target")

    async def _reply(self, item: EvalItem, stored_output: Any) -> tuple[Any, str | None]:
        if item.has_output:
            # A conversation item is stored with its whole transcript as the reply.
            return (item.output if item.output is not None else item.turns), None
        if stored_output is not None:  # the same reply the saved scorers judged
            return stored_output, None
        if self.target is None:
            return None, "the item has no `output` and no target was given to produce one"
        try:
            async with self.slots:
                reply = await asyncio.wait_for(call_target(self.target, item.input), self.target_timeout)
            return as_reply(reply), None
        except asyncio.TimeoutError:
            return None, f"the target did not answer within {self.target_timeout:g}s"
        except Exception as exc:
            return None, one_line(exc)

    def _record(self, scorer: AnyScorer, item: EvalItem, key: str, index: int, reply: Any, started: datetime, **kwargs: Any) -> ResultRecord:
        error_stage = kwargs.pop("stage", None)
        return result_record(
            scorer,
            run=self.run,
            source="batch",
            item_id=key,
            item_index=index,
            input=item.input,
            output=reply,
            context=item.context,
            ground_truth=item.ground_truth,
            metadata=item.metadata,
            expected=item.expected_for(scorer.id),
            started_at=started,
            error_stage=error_stage,
            **kwargs,
        )

    async def _score(self, scorer: AnyScorer, item: EvalItem, key: str, index: int, reply: Any) -> ScorerOutcome:
        async with self.slots:
            started = datetime.now(timezone.utc)
            try:
                result = await scorer.arun(
                    # A conversation item: the scorer takes its last reply from the turns.
                    output=reply if item.turns is None or item.output is not None else None,
                    input=item.input,
                    ground_truth=item.ground_truth,
                    run_id=f"{self.run}/{key}/{scorer.id}",
                    context=item.context,
                    turns=item.turns,
                    expected_trajectory=item.expected_trajectory,
                    metadata=item.metadata,
                    sample=self.sample,
                )
            except Exception as exc:  # judge, inputs, or a bug: this item only
                message = str(exc) if isinstance(exc, ScorerError) else one_line(exc)
                record = self._record(scorer, item, key, index, reply, started, error=message, stage="scorer")
            else:
                record = self._record(scorer, item, key, index, reply, started, result=result)
        self.counts.scored += 1
        if self.max_cost is not None and not record.error:
            self.spent += self.aggregates[scorer.id].cost_of_steps(record.steps.values()) or 0.0
        await self._save(record)
        return outcome_of(record, result=None if record.error else result)

    async def _finish(self, result: ItemResult, stage: Stage) -> None:
        if result.error is not None:
            self._error(result.index, result.id, stage, result.error)
        for scorer_id, outcome in result.results.items():
            expected = result.item.expected_for(scorer_id) if result.item is not None else None
            self.aggregates[scorer_id].add(outcome, expected, result.id, result.index)
            if outcome.error is not None and outcome.error_stage == "scorer":
                self._error(result.index, result.id, "scorer", outcome.error, scorer_id)
        if result.ok:
            self.counts.completed += 1
        else:
            self.counts.failed += 1
        self.counts.resumed += result.resumed
        if self.keep_results:
            self.items[result.index] = result
        if self.on_item_complete is not None:
            try:
                returned = self.on_item_complete(result)
                if inspect.isawaitable(returned):
                    await returned
            except Exception as exc:  # the callback's failure is the host's; the run goes on
                self._error(result.index, result.id, "callback", one_line(exc))


def check_scorers(scorers: Sequence[AnyScorer] | AnyScorer) -> list[AnyScorer]:
    listed = [scorers] if isinstance(scorers, (Scorer, Jury)) else list(scorers)
    if not listed:
        raise ConfigError("run_evals needs at least one scorer")
    for scorer in listed:
        if not isinstance(scorer, (Scorer, Jury)):
            raise ConfigError(f"scorers must be Scorer or Jury objects (create_scorer(...)), got {type(scorer).__name__}")
    ids = [scorer.id for scorer in listed]
    duplicated = sorted({scorer_id for scorer_id in ids if ids.count(scorer_id) > 1})
    if duplicated:
        raise ConfigError(f"results are keyed by scorer id, and {', '.join(duplicated)} appears more than once")
    return listed


def _check_resume(store: Store, run: str, scorers: list[AnyScorer]) -> None:
    """Refuse to mix, under one run name, scores from different scorer definitions or
    judges: their mean would describe neither."""
    versions = store.scorer_versions(run)
    for scorer in scorers:
        now = (scorer.plan.fingerprint, scorer.judge.model)
        before = versions.get(scorer.id, set()) - {now}
        if before:
            scorer_hash, model = sorted(before, key=str)[0]
            raise ConfigError(
                f"run {run!r} already holds {scorer.id} scores from another definition or judge "
                f"(definition {scorer_hash}, judge {model}; now {now[0]}, {now[1]}); "
                "give this run a new name to score with the changed scorer"
            )


def default_run_name(prefix: str = "run") -> str:
    return f"{prefix}-{datetime.now().strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:4]}"


async def arun_evals(
    data: Data,
    scorers: Sequence[AnyScorer] | AnyScorer,
    target: Target | None = None,
    on_item_complete: ItemCallback | None = None,
    concurrency: int = 8,
    *,
    run: str | None = None,
    store: Store | str | Path | None = None,
    thresholds: Mapping[str, float] | None = None,
    keep_results: bool = True,
    target_timeout: float | None = None,
    meta: Mapping[str, Any] | None = None,
    cache: CacheChoice = True,
    max_cost: float | None = None,
    lease_seconds: float = 60.0,
    share_work: bool = True,
    sample: int = 0,
) -> EvalResult:
    """Score every item of `data` with every scorer; see the module docstring.

    `store` (a Store or a SQLite path) saves each result as it completes under the run name
    `run` (generated when omitted); an existing run of that name is resumed. `thresholds`
    ({scorer_id: value}) give `passed`: the mean must be at most the value for
    lower-is-better scorers, at least it otherwise. `on_item_complete(item_result)` (sync or
    async) is called once per item, in completion order, also for items resumed from the
    store (`resumed=True`). `meta` is stored with the run (e.g. where the data came from).
    `sample` numbers a repeated judgement of the same data (see `eval --repeat`): every
    judge request carries it, so a response cache serves each repeat its own answers.

    `cache` puts a response cache in front of every scorer's judge: True (the default) the
    file named by SCORERS_CACHE or in the user's cache directory, a path, a ResponseCache, or
    False for none. `max_cost` (US dollars) stops starting new items once the estimated spend
    of this invocation reaches it; every judge model needs a price then.

    With a store that shares work (a `postgresql://` URL), the same call in several processes
    or machines splits one run: each claims unscored items from the database, holding them for
    `lease_seconds` (renewed while it lives), and returns when the whole run is scored; its
    result counts the items this process scored. `share_work=False` scores every item given
    here (the caller splits the work itself, as the Ray adapter does).
    """
    if not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigError(f"concurrency must be a positive integer, got {concurrency!r}")
    if not lease_seconds > 0:
        raise ConfigError(f"lease_seconds must be positive, got {lease_seconds!r}")
    listed = check_scorers(scorers)
    if max_cost is not None:
        if max_cost <= 0:
            raise ConfigError(f"max_cost must be a positive number of US dollars, got {max_cost!r}")
        unpriced = sorted({scorer.judge.model for scorer in listed if scorer.plan.needs_judge and price_of(scorer) is None})
        if unpriced:
            raise ConfigError(
                f"max_cost needs a price for {', '.join(unpriced)}; add it to your prices file (see docs/performance.md)"
            )
    response_cache = ResponseCache.of(cache)
    if response_cache is not None:
        response_cache.new_session()
        listed = [_with_cache(scorer, response_cache) for scorer in listed]
    limits = dict(thresholds or {})
    unknown = sorted(set(limits) - {scorer.id for scorer in listed})
    if unknown:
        raise ConfigError(f"threshold for {', '.join(unknown)}, which is not among the scorers of this run")
    if target is not None and not (callable(target) or hasattr(target, "generate") or hasattr(target, "agenerate")):
        raise ConfigError(f"target must be a callable or have a generate/agenerate method, got {type(target).__name__}")
    source = data_source(data)
    opened = open_store(store)
    owns_store = opened is not None and opened is not store
    name = run or default_run_name()
    started = time.perf_counter()
    shared = share_work and isinstance(opened, SharesWork)
    try:
        resuming = False
        ended_before = False
        if opened is not None:
            previous = await asyncio.to_thread(opened.get_run, name)
            resuming = previous is not None or shared  # other workers may be saving into it now
            ended_before = previous is not None and previous.status != "running"
            if previous is not None:
                await asyncio.to_thread(_check_resume, opened, name, listed)
            run_meta = {
                **dict(meta or {}),
                "scorers": {
                    scorer.id: {
                        "hash": scorer.plan.fingerprint,
                        "model": scorer.judge.model,
                        # Where a score flags an item: a stored run is measured again the same way.
                        "flag_threshold": flag_threshold(scorer, limits.get(scorer.id)),
                    }
                    for scorer in listed
                },
                "concurrency": concurrency,
                "thresholds": limits,
                **({"sample": sample} if sample else {}),
            }
            await asyncio.to_thread(opened.begin_run, RunInfo(name=name, source="batch", meta=run_meta))
        evaluation = _Evaluation(
            scorers=listed, target=target, on_item_complete=on_item_complete, concurrency=concurrency, run=name,
            store=opened, resuming=resuming, thresholds=limits, keep_results=keep_results, target_timeout=target_timeout,
            max_cost=max_cost,
            sample=sample,
        )  # fmt: skip
        status = "failed"
        flusher = asyncio.create_task(evaluation.writes.periodically()) if evaluation.writes is not None else None
        try:
            if shared:
                assert isinstance(opened, SharesWork)
                await drive_shared(
                    opened, name, source, evaluation.item, concurrency=concurrency, rerun=ended_before, lease_s=lease_seconds
                )
            else:
                await _drive(evaluation, source, concurrency)
            status = "interrupted" if evaluation.stopped else "complete"
        except (asyncio.CancelledError, KeyboardInterrupt):
            status = "interrupted"
            raise
        finally:
            if flusher is not None:
                flusher.cancel()
            if evaluation.writes is not None:
                evaluation.writes.flush_now()
            if opened is not None:
                opened.end_run(name, status)  # type: ignore[arg-type]
    finally:
        if owns_store:
            assert opened is not None
            opened.close()
        if response_cache is not None:
            response_cache.flush()
    summary = {scorer_id: aggregate.summary() for scorer_id, aggregate in evaluation.aggregates.items()}
    verdicts = [item.passed for item in summary.values() if item.passed is not None]
    return EvalResult(
        run=name,
        store=store_location(opened) if opened is not None else None,
        scores={scorer_id: item.mean for scorer_id, item in summary.items()},
        summary=summary,
        counts=evaluation.counts,
        errors=evaluation.errors,
        items=[evaluation.items[index] for index in sorted(evaluation.items)],
        passed=all(verdicts) if verdicts else None,
        duration_s=time.perf_counter() - started,
        cost_usd=_total_cost(summary.values()),
        stopped=evaluation.stopped,
    )


async def _drive(evaluation: _Evaluation, source: Iterable[Any] | AsyncIterable[Any], concurrency: int) -> None:
    """Start items as they are read, at most a window of them at once: enough to keep every
    slot busy, few enough that a huge data file is never held in memory."""
    window = asyncio.Semaphore(concurrency * 2)
    running: set[asyncio.Task[None]] = set()
    failure: list[BaseException] = []

    def done(task: asyncio.Task[None]) -> None:
        running.discard(task)
        window.release()
        if not task.cancelled() and task.exception() is not None:
            failure.append(task.exception())  # type: ignore[arg-type]

    try:
        async for index, raw in numbered(source):
            await window.acquire()
            if failure or evaluation.over_budget():
                break
            task = asyncio.create_task(evaluation.item(index, raw))
            running.add(task)
            task.add_done_callback(done)
        if running:
            await asyncio.wait(set(running))
        if failure:  # item failures are recorded, so only a bug of ours gets here
            raise failure[0]
    finally:
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)


def _with_cache(scorer: AnyScorer, cache: ResponseCache) -> AnyScorer:
    """`scorer` (or each judge of a jury) asking through `cache`."""
    if isinstance(scorer, Jury):
        changed = copy.copy(scorer)
        changed.scorers = [member.with_judge(cache.wrap(member.judge)) for member in scorer.scorers]
        return changed
    return scorer.with_judge(cache.wrap(scorer.judge))


def _total_cost(summaries: Iterable[Any]) -> float | None:
    costs = [summary.cost_usd for summary in summaries if summary.judge_calls]
    return None if any(cost is None for cost in costs) else sum(costs)


def run_evals(
    data: Data,
    scorers: Sequence[AnyScorer] | AnyScorer,
    target: Target | None = None,
    on_item_complete: ItemCallback | None = None,
    concurrency: int = 8,
    **options: Any,
) -> EvalResult:
    """Sync wrapper of `arun_evals` (same arguments)."""
    return run_sync(arun_evals(data, scorers, target, on_item_complete, concurrency, **options))

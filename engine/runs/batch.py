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

Each (item, scorer) pair ends in one of three outcomes, never mixed: scored, error (with its
cause and stage: item, target, scorer, store), or not scorable (the scorer cannot judge the
item, e.g. no context where one is needed; with the reason). Means are over scored items.

With a store, every (item, scorer) result is saved as it completes, in batches (one
transaction per up to 64 results or half a second), with the fingerprints of the item's
content and of the scorer (definition, templates, schemas, options, judge model, mode,
sampling). Running a run of the same name again (after a crash, Ctrl-C, or judge errors)
reuses a saved result only when both fingerprints still match, and judges the rest again;
after a whole pass over a run's data file, results of items no longer in it are dropped. An
item's identity is its `id`, else its line in the data. A run remembers the data file and
the scorers it was started with: resuming it with others is refused (`replace=True` starts
it over), and so is a second process resuming it at once. The judge's answers go through a
response cache (on by default here): a hard crash loses at most the last batch of results,
and scoring those again costs nothing.

A judge failure that no retry can mend (a refused key, an unknown model, an unsupported
response format, a judge that cannot be reached, or the circuit breaker opening) stops the
run at once: finished results stay saved, the run ends `failed`, and a rerun continues it.

Tokens and their estimated cost are summed per scorer; `max_cost` stops a run cleanly (no
new items are started; the run is resumable) once this invocation's spend reaches it, or,
for a run shared by workers, once the spend of all of them together does.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import re
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import ConfigError, JudgeError, NotScorable, ScorerError, StoreError
from ..formatting import one_line, validation_line
from ..judge import ResponseCache
from ..scoring import AnyScorer, Jury, Scorer, each_judge
from ..store import (
    ResultRecord,
    RunInfo,
    RunLease,
    RunStatus,
    SharesWork,
    Stage,
    Store,
    open_store,
    store_location,
)
from ..sync import run_sync
from .items import (
    Data,
    EvalItem,
    NumberedSource,
    UniqueIds,
    UnreadableItem,
    data_source,
    numbered,
)
from .records import outcome_of, result_record
from .results import EvalCounts, EvalError, EvalResult, ItemResult, ScorerOutcome
from .shared import drive_shared
from .stats import Aggregate, flag_threshold, unpriced_models, usage_cost
from .targets import Target, as_reply, call_target

logger = logging.getLogger("engine.evals")

ItemCallback = Callable[[ItemResult], None | Awaitable[None]]
CacheChoice = ResponseCache | str | Path | bool | None


class _BatchedWrites:
    """Results on their way to the store: written together, one transaction per batch, when
    `size` are waiting or every `every` seconds, and all of them when the run ends."""

    #: Failed saves after which the run stops starting items: results that cannot be kept
    #: must not be paid for (a full disk, a database gone).
    stop_after_failures = 3

    def __init__(
        self, store: Store, failed: Callable[[ResultRecord, BaseException], None], give_up: Callable[[StoreError], None], size: int = 64, every: float = 0.5
    ) -> None:
        self.store = store
        self.failed = failed
        self.give_up = give_up
        self.failures = 0
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
                # On a worker thread: a write waiting on another process's lock must not stall
                # the loop. If this task is cancelled meanwhile, the write still completes.
                await asyncio.to_thread(self._write, batch)

    async def periodically(self) -> None:
        while True:
            await asyncio.sleep(self.every)
            await self.flush()

    def flush_now(self) -> None:
        """The last write, at the end of a run (also when it is interrupted)."""
        batch, self.waiting = self.waiting, []
        if batch:
            self._write(batch)

    def _write(self, batch: list[ResultRecord]) -> None:
        """One transaction for the batch; when it fails, each result on its own, so that only
        the results that really cannot be saved are counted as failures."""
        try:
            self.store.save_many(batch)
        except Exception:
            for record in batch:
                try:
                    self.store.save(record)
                except Exception as exc:
                    self.failed(record, exc)
                    self.failures += 1
                    if self.failures == self.stop_after_failures:
                        cause = exc if isinstance(exc, StoreError) else StoreError(one_line(exc), store_location(self.store))
                        self.give_up(cause)


#: How long a run's lease lasts without being renewed (a crashed process frees it then).
LEASE_SECONDS = 60.0

#: How often, at most, a worker of a shared run reads the whole run's spend (for --max-cost).
_SHARED_SPEND_EVERY = 0.5


class _Stopped(Exception):
    """The run is stopping on a fatal judge error reported by another item: this item's
    unfinished work is dropped, not recorded (a rerun does it)."""


def where_item(line: int, item_id: str | None) -> str:
    """How every message names an item: its line in the data and its id."""
    return f"item {line}" + (f" ({item_id})" if item_id and item_id != f"#{line}" else "")


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
        track_items: bool = False,
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
        self.writes = _BatchedWrites(store, self._store_failed, self._store_gave_up) if store is not None else None
        #: Saving results failed again and again: no new item is started (see _store_gave_up).
        self.store_failure: StoreError | None = None
        # Items with a result the store did not keep, and items that failed anyway: an item
        # is counted failed once, whichever comes first (see settle_unsaved).
        self.unsaved: set[str] = set()
        self.failed_keys: set[str] = set()
        self.settled = 0
        self.max_cost = max_cost
        self.spent = 0.0  # estimated US dollars of the judge calls made by this invocation
        #: (when to read again, the run's spend in the store, self.spent then): see over_shared_budget.
        self.shared_spend_read: tuple[float, float, float] | None = None
        self.stopped: str | None = None
        # Ids seen so far, to refuse a duplicate in a one-shot iterator (files and lists are
        # checked before the run). Not with keep_results=False: that promises flat memory.
        self.unique_ids = UniqueIds("data") if keep_results else None
        self.stop_cause: JudgeError | None = None
        self.stop_owner: asyncio.Task[Any] | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        # The item ids of this pass over a data file, to drop results of items gone from it.
        self.seen: set[str] | None = set() if track_items else None

    def _store_failed(self, record: ResultRecord, exc: BaseException) -> None:
        """A batch of results that could not be written: each is a store error, counted, and
        judged again by a rerun (it is not in the store)."""
        line = record.item_index or 0  # the store keeps an item's 1-based line
        reason = exc.message if isinstance(exc, StoreError) else one_line(exc)
        self._error(max(line - 1, 0), line, record.item_id, "store", f"the result could not be saved: {reason}", record.scorer_id)
        aggregate = self.aggregates.get(record.scorer_id)
        if record.ok and aggregate is not None:
            aggregate.unsaved(record.score)
            self.counts.outcomes["scored"] -= 1
            self.counts.outcomes["error"] += 1
        self.unsaved.add(record.item_id)

    def _store_gave_up(self, cause: StoreError) -> None:
        """Saves keep failing: start no new item (called from the writer's thread, so it only
        sets the flag the loop reads). Items in flight finish; their answers stay in the
        response cache, so a rerun once the store is fixed costs nothing for them."""
        if self.store_failure is None:
            where = f" in {cause.location}" if cause.location else ""
            self.store_failure = StoreError(f"results could not be saved{where}: {cause.message}")

    def settle_unsaved(self) -> None:
        """An item whose results the store did not keep failed (once, even with several
        scorers): a rerun judges it again."""
        newly_failed = len(self.unsaved - self.failed_keys) - self.settled
        self.counts.completed -= newly_failed
        self.counts.failed += newly_failed
        self.settled += newly_failed

    def over_budget(self) -> bool:
        if self.max_cost is not None and self.spent >= self.max_cost:
            self.stopped = f"the estimated spend ${self.spent:.4f} reached the budget of ${self.max_cost:g} (--max-cost)"
            return True
        return False

    async def over_shared_budget(self) -> bool:
        """For a run shared by workers: has the spend of every worker, as the store records
        it, reached the budget? Reading it sums the whole run, so it is read at most every
        half second, and less often when the read is slow (at most a twentieth of the time
        goes to it); in between, this worker adds what it spent itself."""
        if self.max_cost is None or self.store is None:
            return False
        started = time.monotonic()
        if self.shared_spend_read is None or started >= self.shared_spend_read[0]:
            if self.writes is not None:
                await self.writes.flush()
            usage = await asyncio.to_thread(self.store.usage, self.run)
            took = time.monotonic() - started
            next_read = started + max(_SHARED_SPEND_EVERY, 20 * took)
            self.shared_spend_read = (next_read, sum(usage_cost(row) or 0.0 for row in usage), self.spent)
        _, stored, spent_then = self.shared_spend_read
        total = stored + self.spent - spent_then
        if total >= self.max_cost:
            self.stopped = f"the run's estimated spend ${total:.4f}, by every worker, reached the budget of ${self.max_cost:g} (--max-cost)"
            return True
        return False

    def _error(self, index: int, line: int, item_id: str | None, stage: Stage, error: str, scorer_id: str | None = None) -> None:
        self.errors.append(EvalError(index=index, line=line, item_id=item_id, scorer_id=scorer_id, stage=stage, error=error))
        logger.warning("%s%s: %s failed: %s", where_item(line, item_id), f" {scorer_id}" if scorer_id else "", stage, error)

    async def _save(self, record: ResultRecord) -> ResultRecord:
        """The record as it now stands. Results go to the store in batches; one that then
        cannot be saved is counted as a store error (and judged again by a rerun)."""
        if self.writes is not None:
            await self.writes.add(record)
        return record

    async def item(self, index: int, line: int, raw: Any) -> None:
        duplicate = self.unique_ids.duplicate(line, raw) if self.unique_ids is not None else None
        if duplicate is not None:
            await self._unreadable(index, line, duplicate)
            return
        if isinstance(raw, UnreadableItem):
            await self._unreadable(index, line, raw.message)
            return
        try:
            item = EvalItem.of(raw)
        except (ValidationError, ValueError) as exc:
            message = validation_line(exc) if isinstance(exc, ValidationError) else str(exc)
            await self._unreadable(index, line, message)
            return
        key, fingerprint = item.key(line), item.fingerprint
        if self.seen is not None:
            self.seen.add(key)
        outcomes: dict[str, ScorerOutcome] = {}
        stored_output: Any = None
        if self.resuming and self.store is not None:
            wanted = {scorer.id: scorer.fingerprint for scorer in self.scorers}
            for record in await asyncio.to_thread(self.store.item_records, self.run, key):
                if record.item_hash != fingerprint:
                    continue  # the item changed since: judged again, its record replaced
                if record.outcome != "error" and wanted.get(record.scorer_id) == record.scorer_hash:
                    outcomes[record.scorer_id] = outcome_of(record, resumed=True)
                if record.output is not None and record.error_stage not in ("target", "item"):
                    stored_output = record.output
        self.counts.reused += len(outcomes)
        pending = [scorer for scorer in self.scorers if scorer.id not in outcomes]
        result = ItemResult(index=index, line=line, id=key, item=item, output=stored_output, resumed=not pending)
        if pending:
            started = datetime.now(timezone.utc)
            reply, error = await self._reply(item, stored_output)
            result.output = reply
            if error is not None:
                result.error = error
                for scorer in pending:
                    record = self._record(scorer, item, key, line, fingerprint, reply, started, error=error, stage="target")
                    record = await self._save(record)
                    outcomes[scorer.id] = outcome_of(record)
            else:
                owner = asyncio.current_task()
                scored = await asyncio.gather(*(self._score(scorer, item, key, index, line, fingerprint, reply, owner) for scorer in pending))
                outcomes.update((outcome.scorer_id, outcome) for outcome in scored)
        # In the scorers' order, whatever order they finished or were loaded in.
        result.results = {scorer.id: outcomes[scorer.id] for scorer in self.scorers}
        await self._finish(result, "target")

    async def _unreadable(self, index: int, line: int, message: str) -> None:
        """An item that cannot be read is each scorer's error, counted and stored like any other."""
        key = f"#{line}"
        if self.seen is not None:
            self.seen.add(key)
        started = datetime.now(timezone.utc)
        outcomes: dict[str, ScorerOutcome] = {}
        for scorer in self.scorers:
            record = result_record(
                scorer, run=self.run, source="batch", item_id=key, item_index=line, input=None, output=None, context=None,
                started_at=started, error=message, error_stage="item",
            )  # fmt: skip
            record = await self._save(record)
            outcomes[scorer.id] = outcome_of(record)
        await self._finish(ItemResult(index=index, line=line, id=None, error=message, results=outcomes), "item")

    async def _reply(self, item: EvalItem, stored_output: Any) -> tuple[Any, str | None]:
        if item.has_output:
            # A conversation item is stored with its whole transcript as the reply.
            return (item.output if item.output is not None else item.turns), None
        if stored_output is not None:  # the same reply the saved scorers judged
            return stored_output, None
        if self.target is None:
            # Nothing to produce a reply: scorers that need one find the item not scorable
            # (and say so); the others (e.g. context precision) judge it as it is.
            return None, None
        try:
            async with self.slots:
                reply = await asyncio.wait_for(call_target(self.target, item.input), self.target_timeout)
            return as_reply(reply), None
        except asyncio.TimeoutError:
            return None, f"the target did not answer within {self.target_timeout:g}s"
        except Exception as exc:
            return None, one_line(exc)

    def _record(
        self, scorer: AnyScorer, item: EvalItem, key: str, line: int, fingerprint: str, reply: Any, started: datetime, **kwargs: Any
    ) -> ResultRecord:
        error_stage = kwargs.pop("stage", None)
        return result_record(
            scorer,
            run=self.run,
            source="batch",
            item_id=key,
            item_index=line,
            item_hash=fingerprint,
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

    async def _score(
        self, scorer: AnyScorer, item: EvalItem, key: str, index: int, line: int, fingerprint: str, reply: Any, owner: asyncio.Task[Any] | None
    ) -> ScorerOutcome:
        async with self.slots:
            started = datetime.now(timezone.utc)
            result = None
            try:
                result = await scorer.ascore(item.run_input(reply, run_id=f"{self.run}/{key}/{scorer.id}"), sample=self.sample)
            except NotScorable as exc:
                record = self._record(scorer, item, key, line, fingerprint, reply, started, not_scorable=str(exc))
            except JudgeError as exc:
                if exc.fatal:
                    self._stop(exc, owner)
                record = self._record(scorer, item, key, line, fingerprint, reply, started, error=str(exc), stage="scorer")
            except Exception as exc:  # inputs, or a bug: this item only
                message = str(exc) if isinstance(exc, ScorerError) else one_line(exc)
                record = self._record(scorer, item, key, line, fingerprint, reply, started, error=message, stage="scorer")
            else:
                record = self._record(scorer, item, key, line, fingerprint, reply, started, result=result)
        self.counts.scored += 1
        if self.max_cost is not None and not record.error:
            self.spent += self.aggregates[scorer.id].cost_of(record.steps, record.judges) or 0.0
        record = await self._save(record)
        return outcome_of(record, result=result if record.ok else None)

    def _stop(self, cause: JudgeError, owner: asyncio.Task[Any] | None) -> None:
        """The first fatal judge error stops the run: every other item in flight (not the
        `owner` task of the item that met it) is cancelled; what they finished is saved and
        a rerun does the rest."""
        if self.stop_cause is not None:
            if owner is not None and owner is self.stop_owner:
                return  # another scorer of the item that stopped the run: recorded with it
            raise _Stopped()
        self.stop_cause, self.stop_owner = cause, owner
        for task in self.tasks:
            if task is not owner:
                task.cancel()

    async def _finish(self, result: ItemResult, stage: Stage) -> None:
        self.counts.items += 1
        if result.error is not None:
            self._error(result.index, result.line, result.id, stage, result.error)
        for scorer_id, outcome in result.results.items():
            expected = result.item.expected_for(scorer_id) if result.item is not None else None
            self.aggregates[scorer_id].add(outcome, expected, result.id, result.index)
            self.counts.outcomes[outcome.outcome] += 1
            if outcome.error is not None and outcome.error_stage in ("scorer", "store"):
                self._error(result.index, result.line, result.id, outcome.error_stage, outcome.error, scorer_id)
        if result.ok:
            self.counts.completed += 1
        else:
            self.counts.failed += 1
            self.failed_keys.add(result.id or f"#{result.line}")
        self.counts.resumed += result.resumed
        if self.keep_results:
            self.items[result.index] = result
        if self.on_item_complete is not None:
            try:
                returned = self.on_item_complete(result)
                if inspect.isawaitable(returned):
                    await returned
            except Exception as exc:  # the callback's failure is the host's; the run goes on
                self._error(result.index, result.line, result.id, "callback", one_line(exc))


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


def _started_with(data: Data, meta: Mapping[str, Any] | None, scorers: list[AnyScorer]) -> dict[str, Any]:
    """What a run is started on, to refuse resuming it on something else: the data file (or
    the `data` a host names in `meta`) and each scorer's fingerprint."""
    source = str(Path(data).resolve()) if isinstance(data, (str, Path)) else (meta or {}).get("data")
    return {"data": source, "scorers": {scorer.id: scorer.fingerprint for scorer in scorers}}


def _check_resume(run: str, before: Mapping[str, Any] | None, now: Mapping[str, Any], scorers: list[AnyScorer]) -> None:
    """Refuse to continue a run on other data or with other scorers or judges: its means
    would describe neither."""
    if not before:
        return  # a run stored before runs remembered this: its records' fingerprints decide
    differences: list[str] = []
    if before.get("data") and now.get("data") and before["data"] != now["data"]:
        differences.append(f"it was started on {before['data']}, not {now['data']}")
    old, new = dict(before.get("scorers") or {}), dict(now["scorers"])
    if set(old) != set(new):
        differences.append(f"it was started with scorers {', '.join(sorted(old)) or 'none'}, not {', '.join(sorted(new))}")
    else:
        changed = [scorer.id for scorer in scorers if old[scorer.id] != new[scorer.id]]
        if changed:
            differences.append(
                f"{', '.join(changed)} changed since (another definition or judge: its YAML, templates, schemas, options, "
                "model, mode or sampling)"
            )
    if differences:
        raise ConfigError(f"cannot resume run {run!r}: {'; '.join(differences)}. Give it a new name, or start it over", parameter="replace")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _Lease:
    """This process's hold on a run, renewed while it runs, so a second process resuming the
    same run is refused instead of judging every item twice."""

    def __init__(self, store: Store, run: str) -> None:
        self.store = store
        self.run = run
        self.host = socket.gethostname()
        self.owner = f"{self.host}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.renewing: asyncio.Task[None] | None = None

    def _lease(self) -> RunLease:
        expires = datetime.now(timezone.utc) + timedelta(seconds=LEASE_SECONDS)
        return RunLease(run=self.run, owner=self.owner, pid=os.getpid(), host=self.host, expires_at=expires)

    def take(self) -> None:
        holder = self.store.lease_run(self._lease())
        if holder is not None and holder.host == self.host and not _pid_alive(holder.pid):
            self.store.release_run(self.run, holder.owner)  # left by a process that died
            holder = self.store.lease_run(self._lease())
        if holder is not None:
            raise ConfigError(
                f"run {self.run!r} is being run by another process (pid {holder.pid} on {holder.host}); "
                "wait for it to end, or give this one another --run name"
            )

    async def keep(self) -> None:
        while True:
            await asyncio.sleep(LEASE_SECONDS / 3)
            try:
                await asyncio.to_thread(self.store.lease_run, self._lease())
            except Exception as exc:  # the run goes on; the lease lapses at worst
                logger.warning("could not renew the lease of run %r: %s", self.run, one_line(exc))

    def release(self) -> None:
        try:
            self.store.release_run(self.run, self.owner)
        except Exception as exc:
            logger.warning("could not release the lease of run %r: %s", self.run, one_line(exc))


def default_run_name(prefix: str = "run") -> str:
    return f"{prefix}-{datetime.now().strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:4]}"


def error_budget(max_errors: int | str | None, items: int) -> int:
    """How many failed items a run may have and still pass: N, or N% of its items."""
    if max_errors is None:
        return 0
    if isinstance(max_errors, str):
        found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(%?)\s*", max_errors)
        if not found:
            raise ConfigError(f"the error budget {max_errors!r}: expected a number of items (5) or a share of them (5%)", parameter="max_errors")
        number, percent = float(found.group(1)), found.group(2)
        if percent:
            if number > 100:
                raise ConfigError(f"the error budget {max_errors!r}: a share is at most 100%", parameter="max_errors")
            return int(items * number / 100)
        if number != int(number):
            raise ConfigError(f"the error budget {max_errors!r}: a number of items is a whole number", parameter="max_errors")
        return int(number)
    if isinstance(max_errors, bool) or not isinstance(max_errors, int) or max_errors < 0:
        raise ConfigError(f"the error budget must be a number of items (>= 0) or a share such as '5%', got {max_errors!r}", parameter="max_errors")
    return max_errors


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
    max_errors: int | str | None = None,
    replace: bool = False,
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
    `run` (generated when omitted); an existing run of that name is resumed (`replace=True`
    starts it over). `thresholds` ({scorer_id: value}) give the summaries' verdicts: the mean
    must be at most the value for lower-is-better scorers, at least it otherwise.
    `max_errors` (N items, or "N%" of them; default 0) is how many failed items the run may
    have: `passed` is True only when every threshold is met, the failed items are within
    that budget, and no judge failure stopped the run. `on_item_complete(item_result)`
    (sync or async) is called once per item, in completion order, also for items resumed
    from the store (`resumed=True`). `meta` is stored with the run (e.g. where the data
    came from; its `data` names the data for the resume check when it is not a file).
    Two items with the same id are refused before any call for files and lists; in a
    one-shot iterator the repeated id is that item's error (not checked with
    keep_results=False, which scores a stream in flat memory). `sample` numbers a repeated
    judgement of the same data (see `eval --repeat`): every judge request carries it, so a
    response cache serves each repeat its own answers.

    `cache` puts a response cache in front of every scorer's judge: True (the default) the
    file named by SCORERS_CACHE or in the user's cache directory, a path, a ResponseCache, or
    False for none. `max_cost` (US dollars) stops starting new items once the estimated spend
    of this invocation reaches it (of the whole run, every worker's spend as the store has
    it, when workers share the run); every judge model needs a price then.

    With a store that shares work (a `postgresql://` URL), the same call in several processes
    or machines splits one run: each claims unscored items from the database, holding them for
    `lease_seconds` (renewed while it lives), and returns when the whole run is scored; its
    result counts the items this process scored. `share_work=False` scores every item given
    here (the caller splits the work itself, as the Ray adapter does). Otherwise a second
    process resuming a run that one is running is refused.
    """
    if not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigError(f"concurrency must be a positive integer, got {concurrency!r}")
    if not lease_seconds > 0:
        raise ConfigError(f"lease_seconds must be positive, got {lease_seconds!r}")
    listed = check_scorers(scorers)
    if max_cost is not None:
        if max_cost <= 0:
            raise ConfigError(f"max_cost must be a positive number of US dollars, got {max_cost!r}")
        unpriced = sorted({model for scorer in listed if scorer.plan.needs_judge for model in unpriced_models(scorer)})
        if unpriced:
            raise ConfigError(
                f"max_cost needs a price for {', '.join(unpriced)}; add it to your prices file (see docs/performance.md)"
            )
    # Opening a cache in a database, and starting its session, are round trips: off the loop.
    response_cache = await asyncio.to_thread(ResponseCache.of, cache)
    if response_cache is not None:
        await asyncio.to_thread(response_cache.new_session)
        listed = [_with_cache(scorer, response_cache) for scorer in listed]
    limits = dict(thresholds or {})
    unknown = sorted(set(limits) - {scorer.id for scorer in listed})
    if unknown:
        raise ConfigError(f"threshold for {', '.join(unknown)}, which is not among the scorers of this run")
    error_budget(max_errors, 0)  # a malformed budget fails before any work
    if target is not None and not (callable(target) or hasattr(target, "generate") or hasattr(target, "agenerate")):
        raise ConfigError(f"target must be a callable or have a generate/agenerate method, got {type(target).__name__}")
    source = data_source(data)
    opened = open_store(store)
    owns_store = opened is not None and opened is not store
    name = run or default_run_name()
    started = time.perf_counter()
    shared = share_work and isinstance(opened, SharesWork)
    lease: _Lease | None = None
    status: RunStatus = "failed"
    try:
        resuming = False
        ended_before = False
        if opened is not None:
            if share_work and not shared:
                # One process at a time, unless workers split the run on purpose: through a store
                # that shares work, or by the caller (share_work=False, as the Ray adapter does).
                lease = _Lease(opened, name)
                await asyncio.to_thread(lease.take)
            started_with = _started_with(data, meta, listed)
            previous = await asyncio.to_thread(opened.get_run, name)
            if previous is not None and replace:
                await asyncio.to_thread(opened.delete_run, name)
                previous = None
            resuming = previous is not None or shared  # other workers may be saving into it now
            ended_before = previous is not None and previous.status != "running"
            if previous is not None:
                _check_resume(name, previous.meta.get("started_with"), started_with, listed)
            run_meta = {
                **dict(meta or {}),
                "scorers": {
                    scorer.id: {
                        "hash": scorer.fingerprint,
                        "definition": scorer.plan.fingerprint,
                        "model": scorer.judge.model,
                        # Where a score flags an item: a stored run is measured again the same way.
                        "flag_threshold": flag_threshold(scorer, limits.get(scorer.id)),
                    }
                    for scorer in listed
                },
                "started_with": started_with,
                "concurrency": concurrency,
                "thresholds": limits,
                **({"sample": sample} if sample else {}),
            }
            await asyncio.to_thread(opened.begin_run, RunInfo(name=name, source="batch", meta=run_meta))
            if lease is not None:
                lease.renewing = asyncio.create_task(lease.keep())
        evaluation = _Evaluation(
            scorers=listed, target=target, on_item_complete=on_item_complete, concurrency=concurrency, run=name,
            store=opened, resuming=resuming, thresholds=limits, keep_results=keep_results, target_timeout=target_timeout,
            max_cost=max_cost, track_items=resuming and isinstance(data, (str, Path)), sample=sample,
        )  # fmt: skip
        status = "failed"
        flusher = asyncio.create_task(evaluation.writes.periodically()) if evaluation.writes is not None else None
        try:
            if shared:
                assert isinstance(opened, SharesWork)

                async def score_claimed(index: int, raw: Any) -> None:
                    await evaluation.item(index, index + 1, raw)

                try:
                    await drive_shared(
                        opened, name, source, score_claimed, concurrency=concurrency, rerun=ended_before, lease_s=lease_seconds,
                        stop_claiming=evaluation.over_shared_budget,
                    )  # fmt: skip
                except _Stopped:
                    pass  # a fatal judge error stopped this worker (recorded as the stop cause)
            else:
                await _drive(evaluation, source, concurrency)
            if evaluation.writes is not None:
                await evaluation.writes.flush()  # a result that cannot be saved decides the status too
                evaluation.settle_unsaved()
            if evaluation.stop_cause is not None or evaluation.store_failure is not None:
                status = "failed"
            elif evaluation.stopped:
                status = "interrupted"  # the budget: resumable like Ctrl-C
            else:
                status = "incomplete" if evaluation.counts.failed else "complete"
                if opened is not None and evaluation.seen is not None and not shared:
                    # A whole pass over the run's own data file: results of items that are
                    # no longer in it (removed, or now with another id) would skew the run.
                    try:
                        await asyncio.to_thread(opened.prune_run, name, evaluation.seen)
                    except StoreError as exc:  # they stay; the next whole pass drops them
                        logger.warning("could not drop the results of items no longer in the data: %s", exc.message)
        except (asyncio.CancelledError, KeyboardInterrupt):
            status = "interrupted"
            raise
        finally:
            if flusher is not None:
                flusher.cancel()
            if evaluation.writes is not None:
                evaluation.writes.flush_now()
            evaluation.settle_unsaved()
            stop = evaluation.stop_cause or evaluation.store_failure
            if opened is not None:
                last = {
                    "status": status, "reused": evaluation.counts.reused, "judged": evaluation.counts.scored,
                    "items": evaluation.counts.items, "failed": evaluation.counts.failed,
                    "stopped_by": str(stop) if stop is not None else None,
                }  # fmt: skip
                try:
                    opened.end_run(name, status, meta={"last_invocation": last})
                except StoreError as exc:  # the run's figures are still reported
                    logger.warning("could not mark run %r %s in the store: %s", name, status, exc.message)
    finally:
        if lease is not None:
            if lease.renewing is not None:
                lease.renewing.cancel()
            lease.release()
        if owns_store:
            assert opened is not None
            opened.close()
        if response_cache is not None:
            response_cache.flush()
    summary = {scorer_id: aggregate.summary() for scorer_id, aggregate in evaluation.aggregates.items()}
    budget = error_budget(max_errors, evaluation.counts.items)
    within_budget = evaluation.counts.failed <= budget
    verdicts = [item.passed for item in summary.values() if item.passed is not None]
    stop = evaluation.stop_cause or evaluation.store_failure
    return EvalResult(
        run=name,
        store=store_location(opened) if opened is not None else None,
        status=status,
        scores={scorer_id: item.mean for scorer_id, item in summary.items()},
        summary=summary,
        counts=evaluation.counts,
        errors=evaluation.errors,
        stopped_by=str(stop) if stop is not None else None,
        stopped_by_kind=type(stop).__name__ if stop is not None else None,
        max_errors=budget,
        items=[evaluation.items[index] for index in sorted(evaluation.items)],
        passed=all(verdicts) and within_budget and stop is None,
        duration_s=time.perf_counter() - started,
        cost_usd=_total_cost(summary.values()),
        stopped=evaluation.stopped,
    )


async def _drive(evaluation: _Evaluation, source: NumberedSource, concurrency: int) -> None:
    """Start items as they are read, at most a window of them at once: enough to keep every
    slot busy, few enough that a huge data file is never held in memory."""
    window = asyncio.Semaphore(concurrency * 2)
    running = evaluation.tasks
    failure: list[BaseException] = []

    def done(task: asyncio.Task[None]) -> None:
        running.discard(task)
        window.release()
        if not task.cancelled() and task.exception() is not None and not isinstance(task.exception(), _Stopped):
            failure.append(task.exception())  # type: ignore[arg-type]

    try:
        async for index, line, raw in numbered(source):
            await window.acquire()
            if failure or evaluation.stop_cause is not None or evaluation.store_failure is not None or evaluation.over_budget():
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


def _with_cache(scorer: AnyScorer, cache: ResponseCache) -> AnyScorer:
    """`scorer` (or each judge of a jury) asking through `cache`."""
    return each_judge(scorer, lambda member: member.with_judge(cache.wrap(member.judge)))


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

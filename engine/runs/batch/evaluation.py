"""Per-item evaluation: read the item, reuse what a resumed run saved, get the reply (from
the item or the target), run every pending scorer, and record each outcome. A failing item
(unreadable, target error, judge error) is recorded with its cause and never stops the
others; a judge failure that no retry can mend stops the run."""

from __future__ import annotations

import asyncio
from datetime import datetime
from datetime import timezone as tz
from typing import Any

from pydantic import ValidationError

from ...errors import BudgetReached, JudgeError, NotScorable, ScorerError, StoreError
from ...formatting import one_line, validation_line
from ...judge.middleware.slots import CallSlots
from ...scoring import AnyScorer, ScoreResult
from ...store import ResultRecord, Store
from ..items import EvalItem, UniqueIds, UnreadableItem
from ..records import outcome_of, result_record
from ..results import ItemResult, ScorerOutcome
from ..targets import Target, as_reply, call_target
from .budget import RunBudget
from .options import Pace
from .resume import saved_outcomes
from .tally import Tally
from .writes import BatchedWrites


class Stopped(Exception):
    """The run is stopping (a fatal judge error reported by another item, a store that cannot
    read this item's saved results): this item's unfinished work is dropped, not recorded (a
    rerun does it)."""


async def ask_scorer(scorer: AnyScorer, item: EvalItem, reply: Any, run_id: str, sample: int) -> ScoreResult:
    """The one place the batch runner calls a scorer."""
    return await scorer.ascore(item.run_input(reply, run_id=run_id), sample=sample)


class Evaluation:
    """One invocation of a batch run, item by item."""

    def __init__(
        self,
        *,
        scorers: list[AnyScorer],
        target: Target | None,
        pace: Pace,
        run: str,
        store: Store | None,
        resuming: bool,
        tally: Tally,
        budget: RunBudget,
        writes: BatchedWrites | None,
        slots: CallSlots,
        track_items: bool,
    ) -> None:
        self.scorers = scorers
        self.target = target
        self.pace = pace
        self.run = run
        self.store = store
        self.resuming = resuming
        self.tally = tally
        self.budget = budget
        self.writes = writes
        # The run's bound on calls in flight: the judges' calls take it inside the scorers
        # (so an item waiting for an answer holds none); a target call takes it here.
        self.slots = slots
        # Ids seen so far, to refuse a duplicate in a one-shot iterator (files and lists are
        # checked before the run). Not with keep_results=False: that promises flat memory.
        self.unique_ids = UniqueIds("data") if pace.keep_results else None
        self.stop_cause: JudgeError | None = None
        self.stop_owner: asyncio.Task[Any] | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        # The item ids of this pass over a data file, to drop results of items gone from it.
        self.seen: set[str] | None = set() if track_items else None

    async def _save(self, record: ResultRecord) -> ResultRecord:
        """The record as it now stands. Results go to the store in batches; one that then
        cannot be saved is counted as a store error (and judged again by a rerun)."""
        if self.writes is not None:
            await self.writes.add(record)
        return record

    async def item(self, index: int, line: int, raw: Any) -> None:
        item = await self._readable(index, line, raw)
        if item is None:
            return
        key, fingerprint = item.key(line), item.fingerprint
        if self.seen is not None:
            self.seen.add(key)
        outcomes: dict[str, ScorerOutcome] = {}
        stored_output: Any = None
        if self.resuming and self.store is not None:
            try:
                outcomes, stored_output = await saved_outcomes(self.store, self.run, key, fingerprint, self.scorers)
            except StoreError as exc:
                self.tally.store_unreadable(exc)
                raise Stopped() from exc
        pending = [scorer for scorer in self.scorers if scorer.id not in outcomes]
        if pending and self.budget.hold_back():
            raise Stopped()  # unfinished, as after Ctrl-C: neither the target nor the judge is asked, and a rerun does it
        self.tally.counts.reused += len(outcomes)
        result = ItemResult(index=index, line=line, id=key, item=item, output=stored_output, resumed=not pending)
        if pending:
            started = datetime.now(tz.utc)
            reply, error = await self._reply(item, stored_output)
            result.output = reply
            if error is not None:
                result.error = error
                for scorer in pending:
                    record = self._record(scorer, item, key, line, fingerprint, reply, started, error=error, stage="target")
                    outcomes[scorer.id] = outcome_of(await self._save(record))
            else:
                owner = asyncio.current_task()
                scored = await asyncio.gather(*(self._score(scorer, item, key, line, fingerprint, reply, owner) for scorer in pending))
                outcomes.update((outcome.scorer_id, outcome) for outcome in scored)
                self.budget.item_judged(sum(self.tally.aggregates[outcome.scorer_id].cost_of(outcome.steps, outcome.judges) or 0.0 for outcome in scored))
        # In the scorers' order, whatever order they finished or were loaded in.
        result.results = {scorer.id: outcomes[scorer.id] for scorer in self.scorers}
        await self.tally.finish(result, "target")

    async def finished_elsewhere(self, index: int, line: int, raw: Any) -> None:
        """An item another worker of a shared run finished: its saved outcomes (errors too:
        nothing is judged here) are tallied as reused, so this worker's result, its verdict,
        agreement and calibration, is the whole run's, which is scored when its command ends."""
        assert self.store is not None
        try:
            item = None if isinstance(raw, UnreadableItem) else EvalItem.of(raw)
        except (ValidationError, ValueError):
            item = None  # recorded by the worker that claimed it under its line, as _unreadable does
        key = item.key(line) if item is not None else f"#{line}"
        wanted = {scorer.id: scorer.fingerprint for scorer in self.scorers}
        saved: dict[str, ScorerOutcome] = {}
        output: Any = None
        for record in await asyncio.to_thread(self.store.item_records, self.run, key):
            if wanted.get(record.scorer_id) != record.scorer_hash or (item is not None and record.item_hash not in (None, item.fingerprint)):
                continue
            saved[record.scorer_id] = outcome_of(record, resumed=True)
            if record.output is not None and record.error_stage not in ("target", "item"):
                output = record.output
        missing = "the worker that finished this item saved no result for it"
        outcomes = {scorer.id: saved.get(scorer.id) or ScorerOutcome(scorer_id=scorer.id, error=missing, error_stage="store") for scorer in self.scorers}
        self.tally.counts.reused += len(saved)
        await self.tally.finish(ItemResult(index=index, line=line, id=key, item=item, output=output, resumed=True, results=outcomes), "store")

    async def _readable(self, index: int, line: int, raw: Any) -> EvalItem | None:
        """The item, or None when it cannot be read (recorded as each scorer's error)."""
        duplicate = self.unique_ids.duplicate(line, raw) if self.unique_ids is not None else None
        if duplicate is not None:
            await self._unreadable(index, line, duplicate)
            return None
        if isinstance(raw, UnreadableItem):
            await self._unreadable(index, line, raw.message)
            return None
        try:
            item = EvalItem.of(raw)
        except (ValidationError, ValueError) as exc:
            await self._unreadable(index, line, validation_line(exc) if isinstance(exc, ValidationError) else str(exc))
            return None
        refused = self._label_off_scale(item)
        if refused is not None:
            await self._unreadable(index, line, refused, item.key(line))
            return None
        return item

    def _label_off_scale(self, item: EvalItem) -> str | None:
        """A number given as a scorer's label must be a score it can give (0 to its scale):
        a label of 2 or -1 would measure agreement against a score no judge can reach."""
        for scorer in self.scorers:
            expected = item.expected_for(scorer.id)
            if expected is None or isinstance(expected, bool):
                continue
            scale = scorer.pass_line.scale
            if not 0 <= expected <= scale:
                return f"`expected` for {scorer.id} is {expected:g}, which is not a score it gives (0 to {scale:g}); a pass/flag label is true or false"
        return None

    async def _unreadable(self, index: int, line: int, message: str, key: str | None = None) -> None:
        """An item that cannot be read (or used: `key` is then its own) is each scorer's error,
        counted and stored like any other."""
        item_id = key
        key = key or f"#{line}"
        if self.seen is not None:
            self.seen.add(key)
        started = datetime.now(tz.utc)
        outcomes: dict[str, ScorerOutcome] = {}
        for scorer in self.scorers:
            record = result_record(
                scorer, run=self.run, source="batch", item_id=key, item_index=line, input=None, output=None, context=None,
                started_at=started, error=message, error_stage="item",
            )
            outcomes[scorer.id] = outcome_of(await self._save(record))
        await self.tally.finish(ItemResult(index=index, line=line, id=item_id, error=message, results=outcomes), "item")

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
        timeout = self.pace.target_timeout
        try:
            async with self.slots.slot:
                reply = await asyncio.wait_for(call_target(self.target, item.input), timeout)
            return as_reply(reply), None
        except asyncio.TimeoutError:
            return None, f"the target did not answer within {timeout:g}s"
        except Exception as exc:
            return None, one_line(exc)

    def _record(
        self, scorer: AnyScorer, item: EvalItem, key: str, line: int, fingerprint: str, reply: Any, started: datetime, **kwargs: Any
    ) -> ResultRecord:
        error_stage = kwargs.pop("stage", None)
        return result_record(
            scorer, run=self.run, source="batch", item_id=key, item_index=line, item_hash=fingerprint, input=item.input,
            output=reply, context=item.context, ground_truth=item.ground_truth, metadata=item.metadata,
            expected=item.expected_for(scorer.id), started_at=started, error_stage=error_stage, **kwargs,
        )

    async def _score(
        self, scorer: AnyScorer, item: EvalItem, key: str, line: int, fingerprint: str, reply: Any, owner: asyncio.Task[Any] | None
    ) -> ScorerOutcome:
        started = datetime.now(tz.utc)
        result = None
        try:
            result = await ask_scorer(scorer, item, reply, f"{self.run}/{key}/{scorer.id}", self.pace.sample)
        except NotScorable as exc:
            record = self._record(scorer, item, key, line, fingerprint, reply, started, not_scorable=str(exc))
        except BudgetReached as exc:  # no call left: the item is unfinished, as after Ctrl-C, and a rerun does it
            raise Stopped() from exc
        except JudgeError as exc:
            if exc.fatal:
                self._stop(exc, owner)
            record = self._record(scorer, item, key, line, fingerprint, reply, started, error=str(exc), stage="scorer")
        except Exception as exc:  # inputs, or a bug: this item only
            message = str(exc) if isinstance(exc, ScorerError) else one_line(exc)
            record = self._record(scorer, item, key, line, fingerprint, reply, started, error=message, stage="scorer")
        else:
            record = self._record(scorer, item, key, line, fingerprint, reply, started, result=result)
        self.tally.counts.scored += 1
        record = await self._save(record)
        return outcome_of(record, result=result if record.ok else None)

    def _stop(self, cause: JudgeError, owner: asyncio.Task[Any] | None) -> None:
        """The first fatal judge error stops the run: every other item in flight (not the
        `owner` task of the item that met it) is cancelled; what they finished is saved and
        a rerun does the rest."""
        if self.stop_cause is not None:
            if owner is not None and owner is self.stop_owner:
                return  # another scorer of the item that stopped the run: recorded with it
            raise Stopped()
        self.stop_cause, self.stop_owner = cause, owner
        for task in self.tasks:
            if task is not owner:
                task.cancel()

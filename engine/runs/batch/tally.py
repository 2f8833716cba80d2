"""What a run has done so far: the counts, every error with where it happened, the running
aggregates per scorer, the per-item results (kept in input order when asked), and the host's
callback once per finished item."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable

from ...errors import StoreError
from ...formatting import one_line
from ...scoring import AnyScorer
from ...store import ResultRecord, Stage
from ..results import EvalCounts, EvalError, ItemResult, Uncovered
from ..measures.stats import Aggregate
from ..verdict import Standard

logger = logging.getLogger("engine.evals")

ItemCallback = Callable[[ItemResult], None | Awaitable[None]]
#: Not-scorable items listed with their reasons (all are counted).
UNCOVERED_KEPT = 1000


def where_item(line: int, item_id: str | None) -> str:
    """How every message names an item: its line in the data and its id."""
    return f"item {line}" + (f" ({item_id})" if item_id and item_id != f"#{line}" else "")


class Tally:
    def __init__(self, scorers: list[AnyScorer], standard: Standard, keep_results: bool, on_item_complete: ItemCallback | None) -> None:
        self.aggregates = {scorer.id: Aggregate(scorer, standard) for scorer in scorers}
        self.counts = EvalCounts()
        self.errors: list[EvalError] = []
        #: Items a scorer could not judge, with why: listed where the verdict's coverage is shown.
        self.not_scorable: list[Uncovered] = []
        self.items: dict[int, ItemResult] = {}
        self.keep_results = keep_results
        self.on_item_complete = on_item_complete
        #: Saving results failed again and again: no new item is started (see store_gave_up).
        self.store_failure: StoreError | None = None
        # Items with a result the store did not keep, and items that failed anyway: an item
        # is counted failed once, whichever comes first (see settle_unsaved).
        self.unsaved: set[str] = set()
        self.failed_keys: set[str] = set()
        self.settled = 0

    def error(self, index: int, line: int, item_id: str | None, stage: Stage, error: str, scorer_id: str | None = None) -> None:
        self.errors.append(EvalError(index=index, line=line, item_id=item_id, scorer_id=scorer_id, stage=stage, error=error))
        logger.warning("%s%s: %s failed: %s", where_item(line, item_id), f" {scorer_id}" if scorer_id else "", stage, error)

    def store_failed(self, record: ResultRecord, exc: BaseException) -> None:
        """A batch of results that could not be written: each is a store error, counted, and
        judged again by a rerun (it is not in the store)."""
        line = record.item_index or 0  # the store keeps an item's 1-based line
        reason = exc.message if isinstance(exc, StoreError) else one_line(exc)
        self.error(max(line - 1, 0), line, record.item_id, "store", f"the result could not be saved: {reason}", record.scorer_id)
        aggregate = self.aggregates.get(record.scorer_id)
        if record.ok and aggregate is not None:
            aggregate.unsaved(record.score)
            self.counts.outcomes["scored"] -= 1
            self.counts.outcomes["error"] += 1
        self.unsaved.add(record.item_id)

    def store_gave_up(self, cause: StoreError) -> None:
        """Saves keep failing: start no new item (called from the writer's thread, so it only
        sets the flag the loop reads). Items in flight finish; their answers stay in the
        response cache, so a rerun once the store is fixed costs nothing for them."""
        where = f" in {cause.location}" if cause.location else ""
        self._store_stops(StoreError(f"results could not be saved{where}: {cause.message}"))

    def store_unreadable(self, cause: StoreError) -> None:
        """Resuming could not read an item's saved results: start no new item, as when saves
        keep failing (judging the item blind could pay again for results already saved).
        What was saved stays; a rerun once the store reads again goes on from there."""
        where = f" from {cause.location}" if cause.location else ""
        self._store_stops(StoreError(f"saved results could not be read{where}: {cause.message}"))

    def _store_stops(self, failure: StoreError) -> None:
        if self.store_failure is None:  # the first failure is the one to fix
            self.store_failure = failure

    def settle_unsaved(self) -> None:
        """An item whose results the store did not keep failed (once, even with several
        scorers): a rerun judges it again."""
        newly_failed = len(self.unsaved - self.failed_keys) - self.settled
        self.counts.completed -= newly_failed
        self.counts.failed += newly_failed
        self.settled += newly_failed

    async def finish(self, result: ItemResult, stage: Stage) -> None:
        """One item done: counted, aggregated, kept (when asked) and told to the host."""
        self.counts.items += 1
        if result.error is not None:
            self.error(result.index, result.line, result.id, stage, result.error)
        for scorer_id, outcome in result.results.items():
            expected = result.item.expected_for(scorer_id) if result.item is not None else None
            self.aggregates[scorer_id].add(outcome, expected, result.id, result.index)
            self.counts.outcomes[outcome.outcome] += 1
            if outcome.outcome == "not_scorable" and len(self.not_scorable) < UNCOVERED_KEPT:
                reason = outcome.not_scorable or "not scorable"
                self.not_scorable.append(Uncovered(index=result.index, line=result.line, item_id=result.id, scorer_id=scorer_id, reason=reason))
            if outcome.error is not None and outcome.error_stage in ("scorer", "store"):
                self.error(result.index, result.line, result.id, outcome.error_stage, outcome.error, scorer_id)
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
                self.error(result.index, result.line, result.id, "callback", one_line(exc))

    def in_order(self) -> list[ItemResult]:
        return [self.items[index] for index in sorted(self.items)]

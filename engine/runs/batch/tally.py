"""What a run has done so far: the counts, every error with where it happened, the running
aggregates per scorer, the per-item results (kept in input order when asked), and the host's
callback once per finished item."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping

from ...formatting import one_line
from ...scoring import AnyScorer
from ...store import ResultRecord, Stage
from ..results import EvalCounts, EvalError, ItemResult
from ..stats import Aggregate

logger = logging.getLogger("engine.evals")

ItemCallback = Callable[[ItemResult], None | Awaitable[None]]


def where_item(line: int, item_id: str | None) -> str:
    """How every message names an item: its line in the data and its id."""
    return f"item {line}" + (f" ({item_id})" if item_id and item_id != f"#{line}" else "")


class Tally:
    def __init__(
        self, scorers: list[AnyScorer], thresholds: Mapping[str, float], keep_results: bool, on_item_complete: ItemCallback | None
    ) -> None:
        self.aggregates = {scorer.id: Aggregate(scorer, thresholds.get(scorer.id)) for scorer in scorers}
        self.counts = EvalCounts()
        self.errors: list[EvalError] = []
        self.items: dict[int, ItemResult] = {}
        self.keep_results = keep_results
        self.on_item_complete = on_item_complete

    def error(self, index: int, line: int, item_id: str | None, stage: Stage, error: str, scorer_id: str | None = None) -> None:
        self.errors.append(EvalError(index=index, line=line, item_id=item_id, scorer_id=scorer_id, stage=stage, error=error))
        logger.warning("%s%s: %s failed: %s", where_item(line, item_id), f" {scorer_id}" if scorer_id else "", stage, error)

    def store_failed(self, record: ResultRecord, exc: BaseException) -> None:
        """A batch of results that could not be written: each is a store error, counted, and
        judged again by a rerun (it is not in the store)."""
        line = record.item_index or 0  # the store keeps an item's 1-based line
        self.error(max(line - 1, 0), line, record.item_id, "store", f"the result could not be saved: {one_line(exc)}", record.scorer_id)
        aggregate = self.aggregates.get(record.scorer_id)
        if record.ok and aggregate is not None:
            aggregate.unsaved(record.score)
            self.counts.failed += 1

    async def finish(self, result: ItemResult, stage: Stage) -> None:
        """One item done: counted, aggregated, kept (when asked) and told to the host."""
        self.counts.items += 1
        if result.error is not None:
            self.error(result.index, result.line, result.id, stage, result.error)
        for scorer_id, outcome in result.results.items():
            expected = result.item.expected_for(scorer_id) if result.item is not None else None
            self.aggregates[scorer_id].add(outcome, expected, result.id, result.index)
            self.counts.outcomes[outcome.outcome] += 1
            if outcome.error is not None and outcome.error_stage in ("scorer", "store"):
                self.error(result.index, result.line, result.id, outcome.error_stage, outcome.error, scorer_id)
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
                self.error(result.index, result.line, result.id, "callback", one_line(exc))

    def in_order(self) -> list[ItemResult]:
        return [self.items[index] for index in sorted(self.items)]

"""One align invocation's judge runs: each a stored batch run (named after what it judges,
so a rerun resumes it and repeats no paid call), sharing the response cache, within the
budget, and told to the caller as it goes."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import BudgetReached
from ...judge.middleware.budget import SpendLimit
from ...judge import ResponseCache
from ...scoring import AnyScorer
from ...scoring.pass_line import Direction
from ...store import Store, open_store
from ..batch import arun_evals
from ..batch.budget import stored_spend
from ..batch.lease import held
from ..results import EvalResult, ItemResult
from ..measures.stats import Labelled, binary_figures, flags, human_flags, numeric_figures
from ..tuning import labelled_of
from .results import AlignMetric
from .split import LabelledItem

CacheChoice = ResponseCache | str | Path | bool | None
#: Shows a run's progress: given what is judged and how many items, the callback each item calls.
Progress = Callable[[str, int], AbstractContextManager[Callable[[ItemResult], None]]]


class JudgeStopped(Exception):
    """A judge failure stopped one of align's runs: align stops, resumably. `kind` is the
    error's class name, so the command can tell a setup mistake (a refused key) from an outage."""

    def __init__(self, message: str, kind: str | None) -> None:
        super().__init__(message)
        self.kind = kind


class NotWhole(Exception):
    """One of align's runs over labelled items left some unscored (not scorable, or failed):
    a metric measured on the rest would judge the scorer on the items it happened to score,
    so align stops, and says why."""


@asynccontextmanager
async def one_at_a_time(store: Store | str | Path | None, run: str) -> AsyncIterator[None]:
    """Hold every run named `run`-... for this process while the body runs: a second align of
    them is refused at once, in one line, while this one does the whole job. Refused rather
    than shared: align is one search whose every step depends on the last, ending in one
    variant written; a second process could share its judge calls but not its decisions, and
    would write the same variant again. A process that dies frees its hold (`Lease`)."""
    opened = await asyncio.to_thread(open_store, store)
    if opened is None:  # nothing stored: no run for another process to find
        yield
        return
    try:
        async with held(opened, f"{run}-*", f"align {run!r}"):
            yield
    finally:
        if opened is not store:
            opened.close()


@contextmanager
def no_progress(what: str, total: int) -> Iterator[Callable[[ItemResult], None]]:
    yield lambda item: None

#: A change smaller than this is no change (floating point).
_EPSILON = 1e-9


def metric_of(labelled: Sequence[Labelled], threshold: float, direction: Direction, metric: AlignMetric) -> float | None:
    """The metric align optimises, from the same figures `eval` reports."""
    if not labelled:
        return None
    if metric == "mae":
        return numeric_figures([(item.score, float(item.expected)) for item in labelled])["mean_abs_error"]
    return binary_figures([(flags(item.score, threshold, direction), bool(item.expected)) for item in labelled])[metric]


def improves(new: float | None, old: float | None, metric: AlignMetric) -> bool:
    if new is None:
        return False
    if old is None:
        return True
    return new < old - _EPSILON if metric == "mae" else new > old + _EPSILON


@dataclass
class Session:
    run: str
    metric: AlignMetric
    direction: Direction
    human_threshold: float
    store: Store | str | Path | None
    cache: CacheChoice
    concurrency: int
    max_cost: float | None
    on_event: Callable[[str], None]
    progress: Progress = no_progress
    runs: list[str] = field(default_factory=list)
    #: One budget for every run of this align, across its invocations (see `open_budget`).
    limit: SpendLimit | None = None
    #: Without a budget: what this invocation's runs cost, reused results included.
    costs: float = 0.0

    def say(self, message: str) -> None:
        self.on_event(message)

    @property
    def spent(self) -> float:
        """What this align has spent: over every invocation with a budget, else what this
        invocation's runs cost."""
        return self.limit.total if self.limit is not None else self.costs

    def open_budget(self, store: Store | None) -> None:
        """The budget counts what earlier invocations of this align spent (their runs are in
        the store), so a rerun does not spend the same budget again."""
        if self.max_cost is None:
            return
        before = 0.0
        if store is not None:
            before = sum(stored_spend(store, info.name) for info in store.runs() if info.kind == "align" and info.name.startswith(f"{self.run}-"))
        self.limit = SpendLimit(self.max_cost, spent_before=before)

    async def evaluate(self, raws: Sequence[dict[str, Any]], scorer: AnyScorer, name: str, what: str, whole: bool = True) -> EvalResult:
        """A stored run of `scorer` over `raws`, within what is left of the budget; unless
        `whole` is False (a run whose failure align reports and goes past), one that did not
        score every item stops align (NotWhole)."""
        if self.limit is not None and self.limit.reached():
            raise BudgetReached(f"the budget (${self.max_cost:g}) was spent before {what}")
        with self.progress(what, len(raws)) as advance:
            result = await arun_evals(
                list(raws), [scorer], run=f"{self.run}-{name}", store=self.store, cache=self.cache, concurrency=self.concurrency,
                max_cost=self.limit, keep_results=True, meta={"data": f"align {self.run}: {what}"}, on_item_complete=advance, kind="align",
            )
        self.runs.append(result.run)
        self.costs += result.cost_usd or 0.0
        cost = f", ${result.cost_usd:.4f}" if result.cost_usd else ""
        self.say(f"{what}: {result.counts.items} item(s), {result.counts.reused} reused from run {result.run}, {result.counts.failed} failed{cost}")
        if result.stopped:
            raise BudgetReached(f"the budget (${self.max_cost:g}) was reached during {what}")
        if result.stopped_by is not None:
            raise JudgeStopped(f"{what}: the judge stopped the run: {result.stopped_by}", result.stopped_by_kind)
        if whole and not result.verdict.passed:
            raise NotWhole(f"{what}: {'; '.join(result.verdict.reasons)}")
        return result

    async def judge(self, scorer: AnyScorer, items: Sequence[LabelledItem], name: str, what: str) -> dict[str, Labelled]:
        """Each item's score beside its label, by item id (items the scorer could not score
        are left out). For a pass/fail metric, a score given as a label becomes a flag."""
        result = await self.evaluate([item.raw for item in items], scorer, name, what)
        labelled = labelled_of(result, scorer.id)
        if self.metric != "mae":
            labelled = [dataclasses.replace(item, expected=human_flags(item.expected, self.human_threshold, self.direction)) for item in labelled]
        return {item.item_id: item for item in labelled}

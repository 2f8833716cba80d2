"""Runs started from the workbench: a scorer (as drafted) over a sample of labelled items,
through `arun_evals` with the same response cache, limiter, budget and results store as
`scorers eval`, in the server's event loop so the page can follow it and stop it.

A run's name is made of the scorer's fingerprint and the sample, so running the same draft
on the same sample again resumes it: what a stopped run finished is reused, and an unchanged
draft costs nothing. A saved version is a run of its own, `workbench-<scorer>-v<N>`, whose
meta records the catalog, the scorer's fingerprint, the files written and the sample; it
lists with `scorers results` like any run."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..judge import ResponseCache
from ..runs import ItemResult, aestimate_evals, arun_evals
from ..runs.measures.stats import flags, human_flags, read_label, usage_cost
from ..runs.verdict import stats_coverage
from ..runs.measures.confidence import confidence_of
from ..runs.measures.confidence import sure_shown
from ..runs.results import calls_sent
from ..runs.stored.reading import compare_runs, existing_run, run_records, run_scale, run_threshold, stored_agreement
from ..scoring import AnyScorer
from ..scoring.pass_line import Direction
from ..errors import StoreError
from ..store import ResultRecord, RunInfo, ScoreStats, Store
from .datasets import DataItem
from .messages import one_line

#: Version numbers looked past before the list of a scorer's saved versions ends.
VERSION_GAPS = 3
STOPPED = "stopped before the end (Stop, the budget or the workbench closing); what was finished is kept: run it again to finish it"
DISTRIBUTION_BINS = 10


@dataclass
class Sample:
    """Which items a run scores: how many, drawn with which seed, from which file."""

    data: str
    size: int
    seed: int
    items: list[DataItem]

    def as_json(self) -> dict[str, Any]:
        return {"data": self.data, "size": self.size, "seed": self.seed, "items": len(self.items)}


@dataclass
class RunProgress:
    """A run the page follows: how far it is, and how it ended."""

    run: str
    scorer_id: str
    sample: Sample
    total: int
    definition: str
    kind: str = "run"  # "version" (a save), "item" (one item, for the preview)
    done: int = 0
    failed: int = 0
    status: str = "running"
    #: Why it did not score everything (what stopped it, else its first error), one line.
    error: str | None = None
    #: When it ended: the items scored, failed and not scorable (`coverage`, the line every
    #: figure is shown with), the calls answered by the response cache and the estimated
    #: cost, as the store records them; the judge calls this invocation sent, answered or
    #: not, as the run's end records them (calls_sent: what `scorers results` reads too);
    #: and results reused from an earlier invocation.
    coverage: str | None = None
    scored: int = 0
    reused: int = 0
    judge_calls: int = 0
    cached_calls: int = 0
    cost_usd: float | None = None
    task: asyncio.Task[None] | None = field(default=None, repr=False)

    def as_json(self) -> dict[str, Any]:
        return {
            "run": self.run, "scorer": self.scorer_id, "kind": self.kind, "total": self.total, "done": self.done,
            "failed": self.failed, "status": self.status, "error": self.error, "sample": self.sample.as_json(),
            "definition": self.definition, "coverage": self.coverage, "scored": self.scored, "reused": self.reused,
            "judge_calls": self.judge_calls, "cached_calls": self.cached_calls, "cost_usd": self.cost_usd,
        }


def run_name(scorer: AnyScorer, sample: Sample) -> str:
    """The same scorer (definition, templates, schemas, judge) on the same sample: the same
    run, so running it again resumes it."""
    data = hashlib.sha256(str(Path(sample.data).resolve()).encode()).hexdigest()[:6]
    return f"workbench-{scorer.id}-{scorer.fingerprint[:10]}-{data}-{sample.size}s{sample.seed}"


class Runner:
    """At most one run at a time, on the results store and response cache of the workbench."""

    def __init__(self, store: Store, cache: ResponseCache | None, concurrency: int = 8, max_cost: float | None = None) -> None:
        self.store = store
        self.cache = cache
        self.concurrency = concurrency
        self.max_cost = max_cost
        self.current: RunProgress | None = None
        #: How a message names files (the session's catalog folder, never a temporary draft).
        self.words: Callable[[str], str] = lambda text: text

    @property
    def busy(self) -> bool:
        return self.current is not None and self.current.status == "running"

    async def estimate(self, scorer: AnyScorer, sample: Sample) -> dict[str, Any]:
        forecast = await aestimate_evals([item.raw for item in sample.items], [scorer], self.cache)
        one = forecast.scorers[0]
        return {
            "items": len(sample.items), "calls": one.calls, "cached_calls": one.cached_calls, "cost_usd": forecast.cost_usd,
            "cost_low_usd": forecast.cost_low_usd, "cost_high_usd": forecast.cost_high_usd,
            "model": one.model, "tokens": one.usage.total_tokens, "not_rendered": one.not_rendered,
        }

    def start(self, scorer: AnyScorer, sample: Sample, name: str | None = None, meta: Mapping[str, Any] | None = None, kind: str = "run") -> RunProgress:
        progress = RunProgress(
            run=name or run_name(scorer, sample), scorer_id=scorer.id, sample=sample, total=len(sample.items), definition=scorer.plan.fingerprint, kind=kind
        )
        self.current = progress
        progress.task = asyncio.create_task(self._run(progress, scorer, meta or {}))
        return progress

    async def _run(self, progress: RunProgress, scorer: AnyScorer, meta: Mapping[str, Any]) -> None:
        def advance(item: ItemResult) -> None:
            progress.done += 1
            progress.failed += not item.ok

        await self._evaluate(progress, scorer, meta, advance)
        await asyncio.to_thread(self._settle, progress)

    async def _evaluate(self, progress: RunProgress, scorer: AnyScorer, meta: Mapping[str, Any], advance: Callable[[ItemResult], None]) -> None:
        try:
            result = await arun_evals(
                [item.raw for item in progress.sample.items], [scorer], on_item_complete=advance, concurrency=self.concurrency,
                run=progress.run, store=self.store, keep_results=False, cache=self.cache if self.cache is not None else False,
                max_cost=self.max_cost, meta={"data": str(Path(progress.sample.data).resolve()), "sample": progress.sample.as_json(), **meta},
                kind="workbench",
            )
        except asyncio.CancelledError:
            progress.status, progress.error = "stopped", STOPPED
        except Exception as exc:  # a run that cannot start (a key, a model): one line on the page
            progress.status, progress.error = "failed", self.words(one_line(exc))
        else:
            progress.status = "stopped" if result.status == "interrupted" else result.status
            progress.reused = result.counts.reused
            cause = result.stopped_by or result.stopped or (result.errors[0].error if result.errors else None)
            progress.error = self.words(one_line(Exception(cause))) if cause is not None else None

    def _settle(self, progress: RunProgress) -> None:
        """The figures of an ended run as the store records them (a run stopped midway
        returns no result, and what its saved items cost is in the store, not in memory)."""
        try:
            stats = self.scorer_stats(progress.run, progress.scorer_id)
            usage = [row for row in self.store.usage(progress.run) if row.scorer_id == progress.scorer_id]
            info = self.store.get_run(progress.run)
        except StoreError as exc:
            progress.error = progress.error or one_line(exc)
            return
        progress.scored, progress.coverage = stats.count, stats_coverage(stats, progress.total)
        progress.judge_calls = (calls_sent(info, last_invocation=True) or 0) if info is not None else 0
        progress.cached_calls = sum(row.cached_calls for row in usage)
        costs = [usage_cost(row) for row in usage if row.judge_calls]
        progress.cost_usd = None if None in costs else sum(cost for cost in costs if cost is not None)

    def scorer_stats(self, run: str, scorer_id: str) -> ScoreStats:
        """A scorer's items scored, failed and not scorable in a stored run, as `scorers results` counts them."""
        return next((stats for stats in self.store.summary(run) if stats.scorer_id == scorer_id), ScoreStats(scorer_id=scorer_id))

    async def stop(self) -> None:
        """Stop the run; what is finished stays in the store (the run is marked interrupted)."""
        current = self.current
        if current is not None and current.task is not None and not current.task.done():
            current.task.cancel()
            await asyncio.gather(current.task, return_exceptions=True)

    # ----------------------------------------------------------------------- versions

    def version_runs(self, scorer_id: str, catalog: str | None = None) -> list[RunInfo]:
        """The runs of a scorer's saved versions, oldest first: of one catalog file (`catalog`,
        as its meta records it), else of every catalog saved into this store (versions are
        numbered across them, so their names never clash)."""
        found, number, missing = [], 0, 0
        while missing < VERSION_GAPS:  # a version run deleted from the store leaves a gap
            number += 1
            info = self.store.get_run(f"workbench-{scorer_id}-v{number}")
            missing = missing + 1 if info is None else 0
            recorded = info.meta.get("workbench") if info is not None else None
            if info is not None and isinstance(recorded, dict) and (catalog is None or recorded.get("catalog") == catalog):
                found.append(info)
        return found

    def versions(self, scorer_id: str, catalog: str) -> list[dict[str, Any]]:
        """The saved versions of a scorer in one catalog, newest first, each with its headline
        figures and the items they stand on."""
        found = []
        for info in reversed(self.version_runs(scorer_id, catalog)):
            recorded = info.meta["workbench"]
            records = run_records(self.store, info.name).get(scorer_id, [])
            agreement = stored_agreement(info, scorer_id, records)
            binary = agreement.binary if agreement is not None else None
            found.append({
                "version": int(info.name.rsplit("-v", 1)[1]), "run": info.name, "saved_at": info.created_at.isoformat(timespec="seconds"),
                "fingerprint": recorded.get("fingerprint"), "files": recorded.get("files", []), "sample": recorded.get("sample"),
                "accepted": recorded.get("accepted"), "status": info.status, "items": len(records),
                "coverage": stats_coverage(self.scorer_stats(info.name, scorer_id), _sample_items(info)),
                "cause": self.words(run_cause(info, records) or "") or None,
                "f1": binary.f1.model_dump() if binary else None, "kappa": binary.kappa.model_dump() if binary else None,
                "accuracy": binary.accuracy.model_dump() if binary else None,
            })
        return found

    def next_version(self, scorer_id: str) -> int:
        saved = self.version_runs(scorer_id)
        return int(saved[-1].name.rsplit("-v", 1)[1]) + 1 if saved else 1

    # ------------------------------------------------------------------------ results

    def report(self, run: str, scorer_id: str, baseline: str | None) -> dict[str, Any]:
        """What the page shows of a stored run: the items its figures stand on (`coverage`)
        and why it did not score everything (`cause`); agreement as `scorers eval` and `scorers
        results` compute it, the confusion matrix, the score distribution, every item, and the
        comparison with `baseline` (the last saved version) on the items both scored."""
        info = existing_run(self.store, run)
        records = run_records(self.store, run).get(scorer_id, [])
        agreement = stored_agreement(info, scorer_id, records)
        threshold, scale = run_threshold(info, scorer_id), run_scale(info, scorer_id)
        direction: Direction = records[0].direction if records else "higher_is_better"
        comparison = None
        if baseline is not None and baseline != run and self.store.get_run(baseline) is not None and records:
            compared = compare_runs(self.store, baseline, run)
            comparison = compared[0].model_dump(mode="json") if compared else None
        scores = [record.score for record in records if record.ok and record.score is not None]
        stats = self.scorer_stats(run, scorer_id)
        return {
            "run": run, "status": info.status, "threshold": threshold, "direction": direction,
            "coverage": stats_coverage(stats, _sample_items(info)), "scored": stats.count, "total": max(_sample_items(info) or 0, stats.total),
            "cause": self.words(run_cause(info, records) or "") or None,
            "definition": info.meta.get("scorers", {}).get(scorer_id, {}).get("definition"), "sample": info.meta.get("sample"),
            "agreement": agreement.model_dump(mode="json") if agreement is not None else None,
            "distribution": _distribution(records, max([1.0, *scores]), direction, scale),
            "items": [_item_row(record, threshold, direction, scale, self.words) for record in records],
            "comparison": comparison, "baseline": baseline if comparison is not None else None,
            "errors": stats.errors,
        }

    def item(self, run: str, scorer_id: str, item_id: str) -> dict[str, Any] | None:
        """One item of a stored run in full: what it read, each step's prompt and answer,
        the reason, the label and the score."""
        found = self.store.query(run=run, scorer=scorer_id)
        record = next((record for record in found if record.item_id == item_id), None)
        if record is None:
            return None
        return {
            "item_id": record.item_id, "score": record.score, "expected": record.expected, "reason": record.reason, **_confidence(record),
            "error": record.error, "not_scorable": record.not_scorable, "input": record.input, "output": record.output,
            "context": record.context, "ground_truth": record.ground_truth,
            "steps": [
                {"id": step.id, "kind": step.kind, "skipped": step.skipped, "system": step.system_prompt, "prompt": step.prompt,
                 "result": step.result, "cached": step.cached}
                for step in record.steps.values()
            ],
        }


def _sample_items(run: RunInfo) -> int | None:
    """How many items a workbench run was given (its sample), as recorded when it started."""
    items = (run.meta.get("sample") or {}).get("items")
    return items if isinstance(items, int) else None


def run_cause(run: RunInfo, records: list[ResultRecord]) -> str | None:
    """Why a stored run did not score everything, in one line (None when it did)."""
    if run.status == "failed":
        stopped_by = (run.meta.get("last_invocation") or {}).get("stopped_by")
        return one_line(Exception(stopped_by)) if stopped_by else "failed"
    if run.status in ("interrupted", "running"):
        return STOPPED
    first = next((record.error for record in records if record.error is not None), None)
    return one_line(Exception(first)) if first is not None else None


def _human(record: ResultRecord, threshold: float, direction: Direction, scale: float | None) -> bool | None:
    """Whether the label flags the item, read as every figure reads it (`read_label`)."""
    if record.expected is None:
        return None
    label = read_label(record.expected, scale, direction)
    return label.flagged if label.flagged is not None else human_flags(record.expected, threshold, direction)


def _item_row(record: ResultRecord, threshold: float, direction: Direction, scale: float | None, words: Callable[[str], str]) -> dict[str, Any]:
    flagged = flags(record.score, threshold, direction) if record.score is not None else None
    human = _human(record, threshold, direction, scale)
    return {
        "item_id": record.item_id, "line": record.item_index, "score": record.score, "expected": record.expected,
        "flagged": flagged, "agrees": None if flagged is None or human is None else flagged == human,
        "reason": record.reason, "error": words(record.error or record.not_scorable or "") or None,
        **_confidence(record),
    }


def _confidence(record: ResultRecord) -> dict[str, Any]:
    """The item's confidence, and as every surface writes it."""
    return {"confidence": confidence_of(record.steps), "confidence_shown": sure_shown(record.steps)}


def _distribution(records: list[ResultRecord], scale: float, direction: Direction, scorer_scale: float | None) -> list[dict[str, Any]]:
    """Scores in equal bins over 0..scale, counted apart for items humans flag and pass (a
    label that says neither, such as a score of 0.4, is counted as unlabelled here)."""
    bins = [{"low": round(scale * n / DISTRIBUTION_BINS, 4), "high": round(scale * (n + 1) / DISTRIBUTION_BINS, 4), "flag": 0, "pass": 0, "unlabelled": 0} for n in range(DISTRIBUTION_BINS)]
    for record in records:
        if not record.ok or record.score is None:
            continue
        index = min(int(record.score / scale * DISTRIBUTION_BINS), DISTRIBUTION_BINS - 1) if scale else 0
        said = read_label(record.expected, scorer_scale, direction).flagged if record.expected is not None else None
        label = "unlabelled" if said is None else "flag" if said else "pass"
        bins[max(index, 0)][label] += 1
    return bins

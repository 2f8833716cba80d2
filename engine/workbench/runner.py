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
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..judge import ResponseCache
from ..scrub import scrub
from ..runs import ItemResult, aestimate_evals, arun_evals
from ..runs.measures.stats import flags, human_flags
from ..runs.stored.reading import compare_runs, existing_run, run_records, run_threshold, stored_agreement
from ..scoring import AnyScorer
from ..scoring.plan import Direction
from ..store import ResultRecord, Store
from .datasets import DataItem

VERSION_RUN = re.compile(r"^workbench-(?P<scorer>.+)-v(?P<version>\d+)$")
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
    kind: str = "run"  # or "version"
    done: int = 0
    failed: int = 0
    status: str = "running"
    error: str | None = None
    #: When it ended: results reused from the store (a resumed run), judge calls made and
    #: answered by the response cache, and the estimated cost.
    reused: int = 0
    judge_calls: int = 0
    cached_calls: int = 0
    cost_usd: float | None = None
    task: asyncio.Task[None] | None = field(default=None, repr=False)

    def as_json(self) -> dict[str, Any]:
        return {
            "run": self.run, "scorer": self.scorer_id, "kind": self.kind, "total": self.total, "done": self.done,
            "failed": self.failed, "status": self.status, "error": self.error, "sample": self.sample.as_json(),
            "reused": self.reused, "judge_calls": self.judge_calls, "cached_calls": self.cached_calls, "cost_usd": self.cost_usd,
        }  # fmt: skip


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
        }  # fmt: skip

    def start(self, scorer: AnyScorer, sample: Sample, name: str | None = None, meta: Mapping[str, Any] | None = None, kind: str = "run") -> RunProgress:
        progress = RunProgress(run=name or run_name(scorer, sample), scorer_id=scorer.id, sample=sample, total=len(sample.items), kind=kind)
        self.current = progress
        progress.task = asyncio.create_task(self._run(progress, scorer, meta or {}))
        return progress

    async def _run(self, progress: RunProgress, scorer: AnyScorer, meta: Mapping[str, Any]) -> None:
        def advance(item: ItemResult) -> None:
            progress.done += 1
            progress.failed += not item.ok

        try:
            result = await arun_evals(
                [item.raw for item in progress.sample.items], [scorer], on_item_complete=advance, concurrency=self.concurrency,
                run=progress.run, store=self.store, keep_results=False, cache=self.cache if self.cache is not None else False,
                max_cost=self.max_cost, meta={"data": str(Path(progress.sample.data).resolve()), "sample": progress.sample.as_json(), **meta},
                kind="workbench",
            )  # fmt: skip
        except asyncio.CancelledError:
            progress.status = "stopped"
            return
        except Exception as exc:  # a run that cannot start (a key, a model): one line on the page
            progress.status, progress.error = "failed", scrub(str(exc))
            return
        progress.status = "stopped" if result.status == "interrupted" else result.status
        summary = result.summary.get(progress.scorer_id)
        progress.reused = result.counts.reused
        if summary is not None:
            progress.judge_calls, progress.cached_calls, progress.cost_usd = summary.judge_calls, summary.cached_calls, summary.cost_usd
        cause = result.stopped_by or result.stopped or (result.errors[0].error if result.errors else None)
        progress.error = scrub(cause) if cause is not None else None

    async def stop(self) -> None:
        """Stop the run; what is finished stays in the store (the run is marked interrupted)."""
        current = self.current
        if current is not None and current.task is not None and not current.task.done():
            current.task.cancel()
            await asyncio.gather(current.task, return_exceptions=True)

    # ----------------------------------------------------------------------- versions

    def versions(self, scorer_id: str) -> list[dict[str, Any]]:
        """The saved versions of a scorer, newest first, each with its headline figures."""
        found = []
        for summary in self.store.runs():
            matched = VERSION_RUN.match(summary.name)
            recorded = summary.meta.get("workbench") or {}
            if matched is None or matched.group("scorer") != scorer_id or not recorded:
                continue
            records = run_records(self.store, summary.name).get(scorer_id, [])
            agreement = stored_agreement(summary, scorer_id, records)
            binary = agreement.binary if agreement is not None else None
            found.append({
                "version": int(matched.group("version")), "run": summary.name, "saved_at": summary.created_at.isoformat(timespec="seconds"),
                "fingerprint": recorded.get("fingerprint"), "files": recorded.get("files", []), "sample": recorded.get("sample"),
                "status": summary.status, "items": len(records),
                "f1": binary.f1.model_dump() if binary else None, "kappa": binary.kappa.model_dump() if binary else None,
                "accuracy": binary.accuracy.model_dump() if binary else None,
            })  # fmt: skip
        return sorted(found, key=lambda version: -int(version["version"]))

    def next_version(self, scorer_id: str) -> int:
        versions = self.versions(scorer_id)
        return int(versions[0]["version"]) + 1 if versions else 1

    # ------------------------------------------------------------------------ results

    def report(self, run: str, scorer_id: str, baseline: str | None) -> dict[str, Any]:
        """What the page shows of a stored run: agreement as `scorers eval` and `scorers
        results` compute it, the confusion matrix, the score distribution, every item, and the
        comparison with `baseline` (the last saved version) on the items both scored."""
        info = existing_run(self.store, run)
        records = run_records(self.store, run).get(scorer_id, [])
        agreement = stored_agreement(info, scorer_id, records)
        threshold = run_threshold(info, scorer_id)
        direction: Direction = records[0].direction if records else "higher_is_better"
        comparison = None
        if baseline is not None and baseline != run and self.store.get_run(baseline) is not None and records:
            compared = compare_runs(self.store, baseline, run)
            comparison = compared[0].model_dump(mode="json") if compared else None
        scores = [record.score for record in records if record.ok and record.score is not None]
        return {
            "run": run, "status": info.status, "threshold": threshold, "direction": direction,
            "agreement": agreement.model_dump(mode="json") if agreement is not None else None,
            "distribution": _distribution(records, max([1.0, *scores])),
            "items": [_item_row(record, threshold, direction) for record in records],
            "comparison": comparison, "baseline": baseline if comparison is not None else None,
            "errors": sum(1 for record in records if record.error is not None),
        }  # fmt: skip

    def item(self, run: str, scorer_id: str, item_id: str) -> dict[str, Any] | None:
        """One item of a stored run in full: what it read, each step's prompt and answer,
        the reason, the label and the score."""
        found = self.store.query(run=run, scorer=scorer_id)
        record = next((record for record in found if record.item_id == item_id), None)
        if record is None:
            return None
        return {
            "item_id": record.item_id, "score": record.score, "expected": record.expected, "reason": record.reason,
            "error": record.error, "not_scorable": record.not_scorable, "input": record.input, "output": record.output,
            "context": record.context, "ground_truth": record.ground_truth,
            "steps": [
                {"id": step.id, "kind": step.kind, "skipped": step.skipped, "system": step.system_prompt, "prompt": step.prompt,
                 "result": step.result, "cached": step.cached}
                for step in record.steps.values()
            ],
        }  # fmt: skip

    def answers(self, run: str, scorer_id: str, item_id: str) -> dict[str, Any]:
        """The judge's stored answers per step for an item, to preview the steps after them."""
        detail = self.item(run, scorer_id, item_id)
        if detail is None:
            return {}
        # The reason step keeps its text, not the answer it was validated as: it is not given.
        return {step["id"]: step["result"] for step in detail["steps"] if step["kind"] == "llm" and not step["skipped"] and step["result"] is not None}


def _item_row(record: ResultRecord, threshold: float, direction: Direction) -> dict[str, Any]:
    flagged = flags(record.score, threshold, direction) if record.score is not None else None
    human = human_flags(record.expected, threshold, direction) if record.expected is not None else None
    return {
        "item_id": record.item_id, "line": record.item_index, "score": record.score, "expected": record.expected,
        "flagged": flagged, "agrees": None if flagged is None or human is None else flagged == human,
        "reason": record.reason, "error": record.error or record.not_scorable,
    }  # fmt: skip


def _distribution(records: list[ResultRecord], scale: float) -> list[dict[str, Any]]:
    """Scores in equal bins over 0..scale, counted apart for items humans flag and pass."""
    bins = [{"low": round(scale * n / DISTRIBUTION_BINS, 4), "high": round(scale * (n + 1) / DISTRIBUTION_BINS, 4), "flag": 0, "pass": 0, "unlabelled": 0} for n in range(DISTRIBUTION_BINS)]
    for record in records:
        if not record.ok or record.score is None:
            continue
        index = min(int(record.score / scale * DISTRIBUTION_BINS), DISTRIBUTION_BINS - 1) if scale else 0
        label = "unlabelled" if record.expected is None else ("flag" if record.expected is True else "pass" if record.expected is False else "unlabelled")
        bins[max(index, 0)][label] += 1
    return bins

"""Scoring a Ray Dataset: for teams whose judge is their own model server (vLLM on a GPU
cluster), where a provider's rate limits no longer bind and one process is the bottleneck.

    import ray
    from engine.ray import score_dataset

    items = ray.data.read_json("s3://bucket/replies.jsonl")
    scored = score_dataset(items, ["hallucination", "faithfulness"], model="openai/Qwen/Qwen2.5-7B-Instruct",
                           base_url="http://vllm.internal:8000/v1", store="postgresql://...", run="nightly",
                           actors=8, concurrency=32)
    scored.write_parquet("s3://bucket/scores/")

Each block of rows goes to one of `actors` async actors; each actor builds the scorers once
and runs them over its block exactly as a batch run does (`arun_evals`), with its own bound
of `concurrency` judge calls in flight. With a store, every result is saved there as it
completes under the run name, and a rerun of the same run skips what is already scored. The
output has the input's columns, the item's `id` (its identity in the run) and, per scorer,
`<scorer>_score`, `<scorer>_reason` and `<scorer>_error`.

Needs the `ray` extra (ray[data]). Scorers are named by id (from the built-in catalog or the
`config` catalog file) so that each actor builds its own: compiled templates and judge
clients do not travel between processes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...catalog import builtin_catalog, load_scorers
from ...errors import ConfigError
from ...judge.settings import JudgeSettings
from ...store import open_store
from ..batch import arun_evals, default_run_name

if TYPE_CHECKING:
    import pyarrow
    from ray.data import Dataset


class ScoringActor:
    """One Ray actor: the scorers, built once, run over each block of rows it is given."""

    def __init__(
        self,
        scorer_ids: Sequence[str],
        judge: JudgeSettings,
        options: Mapping[str, Mapping[str, Any]],
        config: str | None,
        store: str | None,
        run: str,
        concurrency: int,
        cache: str | bool,
    ) -> None:
        catalog = load_scorers(config) if config is not None else builtin_catalog()
        self.scorers = [catalog.create(scorer_id, options=options.get(scorer_id), judge=judge) for scorer_id in scorer_ids]
        # Opened once per actor, not per block: one connection (or pool) for its lifetime.
        self.store = open_store(store)
        self.run = run
        self.concurrency = concurrency
        self.cache = cache

    async def __call__(self, block: pyarrow.Table) -> pyarrow.Table:
        import pyarrow

        rows = block.to_pylist()
        items = [{name: value for name, value in row.items() if value is not None} for row in rows]
        # Items are claimed by Ray, not by the store: a shared store only receives the records.
        result = await arun_evals(
            items, self.scorers, concurrency=self.concurrency, run=self.run, store=self.store, share_work=False, cache=self.cache,
        )
        scored = []
        for row, item in zip(rows, result.items):
            out = {**row, "id": item.id}
            for scorer in self.scorers:
                outcome = item.results.get(scorer.id)
                out[f"{scorer.id}_score"] = outcome.score if outcome is not None else None
                out[f"{scorer.id}_reason"] = outcome.reason if outcome is not None else None
                out[f"{scorer.id}_error"] = outcome.error if outcome is not None else item.error
            scored.append(out)
        return pyarrow.Table.from_pylist(scored)


def score_dataset(
    dataset: Dataset,
    scorers: Sequence[str],
    *,
    model: str | None = None,
    judge: JudgeSettings | None = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    config: str | Path | None = None,
    store: str | Path | None = None,
    cache: str | Path | bool = True,
    run: str | None = None,
    actors: int = 2,
    concurrency: int = 8,
    batch_size: int = 256,
) -> Dataset:
    """A lazy Dataset of the scored rows (see the module docstring); nothing runs until it is
    consumed. `options` are per scorer id; `store` is a SQLite path (one machine) or a
    `postgresql://` URL (a cluster). `cache` is each actor's response cache: True the
    default (SCORERS_CACHE where the actor runs, else a file in its user cache directory),
    a file path, a `postgresql://` URL (one cache for the whole cluster), or False."""
    try:
        import ray.data  # noqa: F401  (checked here: the dataset's methods need it installed)
    except ImportError:
        raise ConfigError("score_dataset needs the ray extra: pip install 'llm-scorers[ray]'") from None
    listed = [scorers] if isinstance(scorers, str) else list(scorers)
    if not listed:
        raise ConfigError("score_dataset needs at least one scorer id")
    for name, value in (("actors", actors), ("concurrency", concurrency), ("batch_size", batch_size)):
        if not isinstance(value, int) or value < 1:
            raise ConfigError(f"{name} must be a positive integer, got {value!r}")
    catalog = load_scorers(config) if config is not None else builtin_catalog()
    settings = (judge or JudgeSettings()).given(model)
    for scorer_id in listed:  # a wrong id, option or judge fails here, not inside every actor
        catalog.create(scorer_id, options=(options or {}).get(scorer_id), judge=settings)
    if store is not None:
        # Created and migrated here, once, before the actors open it together.
        opened = open_store(store)
        assert opened is not None
        opened.close()
    return dataset.map_batches(
        ScoringActor,
        fn_constructor_kwargs={
            "scorer_ids": listed, "judge": settings, "options": dict(options or {}), "config": str(config) if config else None,
            "store": str(store) if store is not None else None, "run": run or default_run_name("ray"), "concurrency": concurrency,
            "cache": str(cache) if isinstance(cache, Path) else cache,
        },
        batch_format="pyarrow",
        batch_size=batch_size,
        compute=ray.data.ActorPoolStrategy(size=actors),
    )

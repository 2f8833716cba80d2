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

With a store, every (item, scorer) result is saved the moment it completes. Running a run
of the same name again (after a crash, Ctrl-C, or judge errors) loads what is saved and
scores only what is missing; an item's identity is its `id`, else a hash of its content.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import logging
import math
import time
import uuid
from collections.abc import AsyncIterable, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import ConfigError, ScorerError
from .scorer import Scorer, ScoreResult, context_strings
from .store import ResultRecord, RunInfo, ScoreStats, Source, Stage, Store, open_store
from .sync import run_sync

logger = logging.getLogger("engine.evals")

#: A callable mapping an input to a reply (sync or async), or an object with an
#: `agenerate` (async) or `generate` (sync) method.
Target = Any
ItemCallback = Callable[["ItemResult"], None | Awaitable[None]]
Data = Union[Iterable[Any], AsyncIterable[Any], str, Path]

_KNOWN_FIELDS = ("input", "output", "context", "ground_truth", "id", "metadata", "expected")


class EvalItem(BaseModel):
    """One item of the data. Keys other than the known ones are kept as metadata."""

    model_config = ConfigDict(extra="forbid")

    input: Any = None
    output: Any = Field(default=None, description="A pre-computed reply: no target is called for this item")
    context: list[str] | None = None
    ground_truth: Any = None
    id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    expected: dict[str, float] = Field(
        default_factory=dict, description="Human scores by scorer id, on the scorer's own scale: to measure agreement"
    )

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value

    @field_validator("context", mode="before")
    @classmethod
    def _context_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [value]
        if isinstance(value, (list, tuple)):
            return context_strings(value, "context")
        return value

    @classmethod
    def of(cls, value: Any) -> EvalItem:
        """An item from a dict (unknown keys → metadata), a bare string (the input), or an item."""
        if isinstance(value, EvalItem):
            return value
        if isinstance(value, str):
            return cls(input=value)
        if not isinstance(value, Mapping):
            raise ValueError(f"an item must be an object with an `input` (or a string), got {type(value).__name__}")
        known = {name: value[name] for name in _KNOWN_FIELDS if name in value}
        extra = {name: item for name, item in value.items() if name not in _KNOWN_FIELDS}
        if extra:
            metadata = known.get("metadata")
            if metadata is not None and not isinstance(metadata, Mapping):
                raise ValueError("`metadata` must be an object")
            known["metadata"] = {**extra, **(metadata or {})}
        return cls.model_validate(known)

    @property
    def has_output(self) -> bool:
        return "output" in self.model_fields_set and self.output is not None

    @property
    def key(self) -> str:
        """The item's identity in a run: its `id`, else a hash of its content (so the same
        item in a rerun of the data is recognised; identical items count as one)."""
        if self.id is not None:
            return self.id
        content = self.model_dump(exclude={"id"}, exclude_none=True)
        digest = hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()
        return f"sha256:{digest[:20]}"


class ScorerOutcome(BaseModel):
    """One scorer's result for one item: a score and reason, or the error that stopped it."""

    scorer_id: str
    score: float | None = None
    reason: str | None = None
    steps: dict[str, Any] = Field(default_factory=dict, description="Each step's validated result, by step id")
    error: str | None = None
    error_stage: Stage | None = None
    resumed: bool = Field(default=False, description="Loaded from the store, scored by an earlier invocation")
    total_tokens: int = 0
    latency_ms: float | None = None
    result: ScoreResult | None = Field(default=None, exclude=True, description="The full result (not for resumed ones)")

    @property
    def ok(self) -> bool:
        return self.error is None and self.score is not None


class ItemResult(BaseModel):
    """What `on_item_complete` receives: the item, the target's reply, the results by scorer id."""

    index: int
    id: str | None = Field(description="The item's key: its `id` or content hash (None when unreadable)")
    item: EvalItem | None = None
    output: Any = Field(default=None, description="The reply that was scored (the target's, or the item's own)")
    results: dict[str, ScorerOutcome] = Field(default_factory=dict)
    error: str | None = Field(default=None, description="Why no scorer could run (unreadable item, target failure)")
    resumed: bool = Field(default=False, description="Every result was loaded from the store; nothing ran now")

    @property
    def ok(self) -> bool:
        return self.error is None and all(outcome.ok for outcome in self.results.values())


class EvalError(BaseModel):
    """One failure, with where it happened and why (one line)."""

    index: int
    item_id: str | None
    scorer_id: str | None = None
    stage: Stage
    error: str


class Agreement(BaseModel):
    """How well a scorer agrees with the human scores (`expected`) of the items: what a
    prompt tuner compares before and after changing a template."""

    labelled: int = Field(description="Items with both a human score and a judge score")
    rank_correlation: float | None = Field(
        description="Spearman's rho between judge and human scores, -1..1 (None when either side is constant); "
        "1 means the judge orders the items exactly as the humans do"
    )
    mean_abs_error: float = Field(description="Mean |judge score - human score|, on the scorer's scale")


class ScorerSummary(ScoreStats):
    threshold: float | None = None
    passed: bool | None = Field(default=None, description="Mean within the threshold (None without one)")
    agreement: Agreement | None = Field(default=None, description="Only when items carry `expected` scores")


class EvalCounts(BaseModel):
    items: int = 0
    completed: int = Field(default=0, description="Items every scorer scored")
    failed: int = Field(default=0, description="Items with at least one error")
    resumed: int = Field(default=0, description="Items entirely loaded from the store")
    scored: int = Field(default=0, description="Scorer runs done in this invocation")


class EvalResult(BaseModel):
    run: str
    store: str | None = None
    scores: dict[str, float | None] = Field(description="Mean score per scorer id (None: nothing scored)")
    summary: dict[str, ScorerSummary]
    counts: EvalCounts
    errors: list[EvalError]
    items: list[ItemResult] = Field(default_factory=list, description="Per item, in input order (unless keep_results=False)")
    passed: bool | None = Field(default=None, description="Every threshold met (None without thresholds)")
    duration_s: float = 0.0


# --- data --------------------------------------------------------------------------------


class _Unreadable(BaseModel):
    """A line of a data file that is not an item; recorded as that item's error."""

    message: str


def read_jsonl(path: str | Path) -> Iterator[Any]:
    """Items of a JSONL file, one line at a time (blank lines skipped)."""
    path = Path(path)
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                yield _Unreadable(message=f"{path}:{number}: invalid JSON: {exc.msg}")


def _data_source(data: Data) -> Iterable[Any] | AsyncIterable[Any]:
    if isinstance(data, (str, Path)):
        path = Path(data)
        if path.suffix in (".jsonl", ".ndjson"):
            return read_jsonl(path)
        if path.suffix == ".json":
            try:
                loaded = json.loads(path.read_text(encoding="utf-8"))
            except OSError as exc:
                raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
            except json.JSONDecodeError as exc:
                raise ConfigError(f"invalid JSON: {exc.msg}", path, exc.lineno) from None
            if not isinstance(loaded, list):
                raise ConfigError("a .json data file must hold a list of items", path)
            return loaded
        raise ConfigError(f"data file {path} must be .jsonl (one item per line) or .json (a list of items)")
    if isinstance(data, Mapping):
        raise ConfigError("data must be a list or an iterable of items, not one item")
    if not isinstance(data, (Iterable, AsyncIterable)):
        raise ConfigError(f"data must be a list, an iterable or a JSONL path, got {type(data).__name__}")
    return data


async def _enumerate(source: Iterable[Any] | AsyncIterable[Any]) -> AsyncIterable[tuple[int, Any]]:
    index = 0
    if isinstance(source, AsyncIterable):
        async for value in source:
            yield index, value
            index += 1
    else:
        for value in source:
            yield index, value
            index += 1


# --- the target ----------------------------------------------------------------------------


async def call_target(target: Target, value: Any) -> Any:
    """The target's reply to `value`. Sync targets run on a worker thread, so that a slow
    one does not hold up the event loop (and with it every other item)."""
    function: Callable[..., Any]
    if hasattr(target, "agenerate"):
        function = target.agenerate
    elif hasattr(target, "generate"):
        function = target.generate
    elif callable(target):
        function = target
    else:
        raise ConfigError(f"target must be a callable or have a generate/agenerate method, got {type(target).__name__}")
    if inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(getattr(function, "__call__", None)):
        reply = await function(value)
    else:
        reply = await asyncio.to_thread(function, value)
    if inspect.isawaitable(reply):
        reply = await reply
    return reply


def as_reply(value: Any) -> Any:
    """What a target returned, as something a scorer judges: text or chat messages.
    Result objects with `messages` (preferred: they carry tool results) or `text` are read."""
    if isinstance(value, (str, list, tuple)):
        return list(value) if isinstance(value, tuple) else value
    if isinstance(value, Mapping):
        if "role" in value:
            return [dict(value)]
        for name in ("messages", "text", "content"):
            if isinstance(value.get(name), (str, list)):
                return value[name]
    else:
        for name in ("messages", "text", "content"):
            attribute = getattr(value, name, None)
            if isinstance(attribute, (str, list)):
                return attribute
    if value is None:
        raise ValueError("the target returned None")
    raise ValueError(f"the target returned a {type(value).__name__}; expected text or chat messages")


def one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    message = text[0] if text else ""
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


# --- records ---------------------------------------------------------------------------------


def result_record(
    scorer: Scorer,
    *,
    run: str,
    source: Source,
    item_id: str,
    item_index: int | None,
    input: Any,
    output: Any,
    context: list[str] | None,
    ground_truth: Any = None,
    metadata: Mapping[str, Any] | None = None,
    result: ScoreResult | None = None,
    error: str | None = None,
    error_stage: Stage | None = None,
    started_at: datetime,
) -> ResultRecord:
    """The stored form of one scorer's outcome (shared by batch and live scoring)."""
    finished = datetime.now(timezone.utc)
    record = ResultRecord(
        run=run,
        source=source,
        item_id=item_id,
        item_index=item_index,
        scorer_id=scorer.id,
        scorer_hash=scorer.compiled.fingerprint,
        model=scorer.judge.model,
        direction=scorer.definition.direction,
        error=error,
        error_stage=error_stage,
        input=input,
        output=output,
        context=context,
        ground_truth=ground_truth,
        metadata=dict(metadata or {}),
        latency_ms=(finished - started_at).total_seconds() * 1000,
        started_at=started_at,
        finished_at=finished,
    )
    if result is not None:
        usage = result.usage
        record.score = result.score
        record.reason = result.reason
        record.steps = {step_id: step.model_dump(mode="json") for step_id, step in result.steps.items()}
        record.prompt_tokens = usage.prompt_tokens
        record.completion_tokens = usage.completion_tokens
        record.total_tokens = usage.total_tokens
        record.latency_ms = result.duration_ms
    return record


def _outcome(record: ResultRecord, result: ScoreResult | None = None, resumed: bool = False) -> ScorerOutcome:
    return ScorerOutcome(
        scorer_id=record.scorer_id,
        score=record.score,
        reason=record.reason,
        steps={step_id: (step or {}).get("result") for step_id, step in record.steps.items()},
        error=record.error,
        error_stage=record.error_stage,
        resumed=resumed,
        total_tokens=record.total_tokens,
        latency_ms=record.latency_ms,
        result=result,
    )


# --- the run ---------------------------------------------------------------------------------


class _Aggregate:
    """Running count/sum/min/max per scorer, so a long run needs no per-item memory."""

    def __init__(self, scorer: Scorer, threshold: float | None) -> None:
        self.scorer = scorer
        self.threshold = threshold
        self.count = 0
        self.total = 0.0
        self.low = math.inf
        self.high = -math.inf
        self.errors = 0
        self.labelled: list[tuple[float, float]] = []  # (judge, human): two numbers per labelled item

    def add(self, outcome: ScorerOutcome, expected: float | None) -> None:
        if outcome.ok:
            assert outcome.score is not None
            if expected is not None:
                self.labelled.append((outcome.score, expected))
            self.count += 1
            self.total += outcome.score
            self.low = min(self.low, outcome.score)
            self.high = max(self.high, outcome.score)
        else:
            self.errors += 1

    def summary(self) -> ScorerSummary:
        direction = self.scorer.definition.direction
        mean = self.total / self.count if self.count else None
        passed: bool | None = None
        if self.threshold is not None:
            # No score at all cannot pass: a CI gate must not turn green on a dead judge.
            passed = mean is not None and (mean <= self.threshold if direction == "lower_is_better" else mean >= self.threshold)
        return ScorerSummary(
            scorer_id=self.scorer.id,
            direction=direction,
            count=self.count,
            mean=mean,
            min=self.low if self.count else None,
            max=self.high if self.count else None,
            errors=self.errors,
            threshold=self.threshold,
            passed=passed,
            agreement=_agreement(self.labelled) if self.labelled else None,
        )


def _ranks(values: list[float]) -> list[float]:
    """1-based ranks, ties sharing their average rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def _agreement(pairs: list[tuple[float, float]]) -> Agreement:
    judge, human = [pair[0] for pair in pairs], [pair[1] for pair in pairs]
    judge_ranks, human_ranks = _ranks(judge), _ranks(human)
    mean_judge, mean_human = sum(judge_ranks) / len(pairs), sum(human_ranks) / len(pairs)
    covariance = sum((a - mean_judge) * (b - mean_human) for a, b in zip(judge_ranks, human_ranks))
    spread = math.sqrt(sum((a - mean_judge) ** 2 for a in judge_ranks) * sum((b - mean_human) ** 2 for b in human_ranks))
    return Agreement(
        labelled=len(pairs),
        rank_correlation=round(covariance / spread, 4) if spread else None,
        mean_abs_error=round(sum(abs(a - b) for a, b in pairs) / len(pairs), 4),
    )


class _Evaluation:
    def __init__(
        self,
        scorers: list[Scorer],
        target: Target | None,
        on_item_complete: ItemCallback | None,
        concurrency: int,
        run: str,
        store: Store | None,
        resuming: bool,
        thresholds: Mapping[str, float],
        keep_results: bool,
        target_timeout: float | None,
    ) -> None:
        self.scorers = scorers
        self.target = target
        self.on_item_complete = on_item_complete
        self.run = run
        self.store = store
        self.resuming = resuming
        self.keep_results = keep_results
        self.target_timeout = target_timeout
        # The one bound: every target call and every scorer run holds a slot while it runs.
        self.slots = asyncio.Semaphore(concurrency)
        self.aggregates = {scorer.id: _Aggregate(scorer, thresholds.get(scorer.id)) for scorer in scorers}
        self.counts = EvalCounts()
        self.errors: list[EvalError] = []
        self.items: dict[int, ItemResult] = {}

    def _error(self, index: int, item_id: str | None, stage: Stage, error: str, scorer_id: str | None = None) -> None:
        self.errors.append(EvalError(index=index, item_id=item_id, scorer_id=scorer_id, stage=stage, error=error))
        logger.warning("item %d (%s)%s: %s failed: %s", index, item_id or "unread", f" {scorer_id}" if scorer_id else "", stage, error)

    async def _save(self, record: ResultRecord) -> None:
        if self.store is None:
            return
        try:
            # On a worker thread: a write waiting on another process's lock must not stall
            # the loop. If this task is cancelled meanwhile, the write still completes.
            await asyncio.to_thread(self.store.save, record)
        except Exception as exc:
            self._error(record.item_index or 0, record.item_id, "store", one_line(exc), record.scorer_id)

    async def item(self, index: int, raw: Any) -> None:
        self.counts.items += 1
        if isinstance(raw, _Unreadable):
            await self._finish(ItemResult(index=index, id=None, error=raw.message), "item")
            return
        try:
            item = EvalItem.of(raw)
        except (ValidationError, ValueError) as exc:
            message = _validation_line(exc) if isinstance(exc, ValidationError) else str(exc)
            await self._finish(ItemResult(index=index, id=None, error=message), "item")
            return
        key = item.key
        outcomes: dict[str, ScorerOutcome] = {}
        stored_output: Any = None
        if self.resuming and self.store is not None:
            for record in await asyncio.to_thread(self.store.item_records, self.run, key):
                if record.ok and record.scorer_id in self.aggregates:
                    outcomes[record.scorer_id] = _outcome(record, resumed=True)
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
                    outcomes[scorer.id] = _outcome(record)
            else:
                scored = await asyncio.gather(*(self._score(scorer, item, key, index, reply) for scorer in pending))
                outcomes.update((outcome.scorer_id, outcome) for outcome in scored)
        # In the scorers' order, whatever order they finished or were loaded in.
        result.results = {scorer.id: outcomes[scorer.id] for scorer in self.scorers}
        await self._finish(result, "target")

    async def _reply(self, item: EvalItem, stored_output: Any) -> tuple[Any, str | None]:
        if item.has_output:
            return item.output, None
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

    def _record(self, scorer: Scorer, item: EvalItem, key: str, index: int, reply: Any, started: datetime, **kwargs: Any) -> ResultRecord:
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
            started_at=started,
            error_stage=error_stage,
            **kwargs,
        )

    async def _score(self, scorer: Scorer, item: EvalItem, key: str, index: int, reply: Any) -> ScorerOutcome:
        async with self.slots:
            started = datetime.now(timezone.utc)
            try:
                result = await scorer.arun(
                    output=reply,
                    input=item.input,
                    ground_truth=item.ground_truth,
                    run_id=f"{self.run}/{key}/{scorer.id}",
                    context=item.context,
                )
            except Exception as exc:  # judge, inputs, or a bug: this item only
                message = str(exc) if isinstance(exc, ScorerError) else one_line(exc)
                record = self._record(scorer, item, key, index, reply, started, error=message, stage="scorer")
            else:
                record = self._record(scorer, item, key, index, reply, started, result=result)
        self.counts.scored += 1
        await self._save(record)
        return _outcome(record, result=None if record.error else result)

    async def _finish(self, result: ItemResult, stage: Stage) -> None:
        if result.error is not None:
            self._error(result.index, result.id, stage, result.error)
        expected = result.item.expected if result.item is not None else {}
        for scorer_id, outcome in result.results.items():
            self.aggregates[scorer_id].add(outcome, expected.get(scorer_id))
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


def _validation_line(exc: ValidationError) -> str:
    first = exc.errors()[0]
    return f"{'.'.join(map(str, first['loc'])) or 'item'}: {first['msg']}"


def check_scorers(scorers: Sequence[Scorer] | Scorer) -> list[Scorer]:
    listed = [scorers] if isinstance(scorers, Scorer) else list(scorers)
    if not listed:
        raise ConfigError("run_evals needs at least one scorer")
    for scorer in listed:
        if not isinstance(scorer, Scorer):
            raise ConfigError(f"scorers must be Scorer objects (create_scorer(...)), got {type(scorer).__name__}")
    ids = [scorer.id for scorer in listed]
    duplicated = sorted({scorer_id for scorer_id in ids if ids.count(scorer_id) > 1})
    if duplicated:
        raise ConfigError(f"results are keyed by scorer id, and {', '.join(duplicated)} appears more than once")
    return listed


def _check_resume(store: Store, run: str, scorers: list[Scorer]) -> None:
    """Refuse to mix, under one run name, scores from different scorer definitions or
    judges: their mean would describe neither."""
    versions = store.scorer_versions(run)
    for scorer in scorers:
        now = (scorer.compiled.fingerprint, scorer.judge.model)
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
    scorers: Sequence[Scorer] | Scorer,
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
) -> EvalResult:
    """Score every item of `data` with every scorer; see the module docstring.

    `store` (a Store or a SQLite path) saves each result as it completes under the run name
    `run` (generated when omitted); an existing run of that name is resumed. `thresholds`
    ({scorer_id: value}) give `passed`: the mean must be at most the value for
    lower-is-better scorers, at least it otherwise. `on_item_complete(item_result)` (sync or
    async) is called once per item, in completion order, also for items resumed from the
    store (`resumed=True`). `meta` is stored with the run (e.g. where the data came from).
    """
    if not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigError(f"concurrency must be a positive integer, got {concurrency!r}")
    listed = check_scorers(scorers)
    limits = dict(thresholds or {})
    unknown = sorted(set(limits) - {scorer.id for scorer in listed})
    if unknown:
        raise ConfigError(f"threshold for {', '.join(unknown)}, which is not among the scorers of this run")
    if target is not None and not (callable(target) or hasattr(target, "generate") or hasattr(target, "agenerate")):
        raise ConfigError(f"target must be a callable or have a generate/agenerate method, got {type(target).__name__}")
    source = _data_source(data)
    opened = open_store(store)
    owns_store = opened is not None and opened is not store
    name = run or default_run_name()
    started = time.perf_counter()
    try:
        resuming = False
        if opened is not None:
            resuming = await asyncio.to_thread(opened.get_run, name) is not None
            if resuming:
                await asyncio.to_thread(_check_resume, opened, name, listed)
            run_meta = {
                **dict(meta or {}),
                "scorers": {scorer.id: {"hash": scorer.compiled.fingerprint, "model": scorer.judge.model} for scorer in listed},
                "concurrency": concurrency,
                "thresholds": limits,
            }
            await asyncio.to_thread(opened.begin_run, RunInfo(name=name, source="batch", meta=run_meta))
        evaluation = _Evaluation(listed, target, on_item_complete, concurrency, name, opened, resuming, limits, keep_results, target_timeout)
        status = "failed"
        try:
            await _drive(evaluation, source, concurrency)
            status = "complete"
        except (asyncio.CancelledError, KeyboardInterrupt):
            status = "interrupted"
            raise
        finally:
            if opened is not None:
                opened.end_run(name, status)  # type: ignore[arg-type]
    finally:
        if owns_store:
            assert opened is not None
            opened.close()
    summary = {scorer_id: aggregate.summary() for scorer_id, aggregate in evaluation.aggregates.items()}
    verdicts = [item.passed for item in summary.values() if item.passed is not None]
    return EvalResult(
        run=name,
        store=str(getattr(opened, "path", opened)) if opened is not None else None,
        scores={scorer_id: item.mean for scorer_id, item in summary.items()},
        summary=summary,
        counts=evaluation.counts,
        errors=evaluation.errors,
        items=[evaluation.items[index] for index in sorted(evaluation.items)],
        passed=all(verdicts) if verdicts else None,
        duration_s=time.perf_counter() - started,
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
        async for index, raw in _enumerate(source):
            await window.acquire()
            if failure:
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


def run_evals(
    data: Data,
    scorers: Sequence[Scorer] | Scorer,
    target: Target | None = None,
    on_item_complete: ItemCallback | None = None,
    concurrency: int = 8,
    **options: Any,
) -> EvalResult:
    """Sync wrapper of `arun_evals` (same arguments)."""
    return run_sync(arun_evals(data, scorers, target, on_item_complete, concurrency, **options))

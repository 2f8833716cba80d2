"""Batch runs through the provider's Batch API: half the price, for sets that can wait.

The scorers run exactly as in any batch run (their plans, their rendering, their score
computation, the same records in the same store); only their judge differs. Each judge call
becomes a line of a batch instead of a request: once every running scorer waits on its
current step, the waiting requests go out as one Batch API job per judge endpoint and model
(a JSONL file uploaded with purpose "batch", a batch over /v1/chat/completions with a 24-hour
window), the job is polled until it ends, and its output and error files answer the waiting
steps. The scorers then go on to their next step, whose requests form the next job, and so
on until every item is scored.

Each answer is validated with the step's answer model, as Instructor does for a live call;
an answer that fails is re-asked in the next job (up to the step's `reasks`), and a line that
failed (a server error, an expired batch) is asked again up to the judge's `http_retries`,
then recorded as that item's failure. Every job's id is saved in the store: a run that is
stopped and started again first polls the jobs it already submitted and takes their answers,
so nothing is paid for twice.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ...errors import (
    AnswerCutOffError,
    ConfigError,
    InvalidAnswerError,
    JudgeError,
    JudgeRequestError,
    JudgeServerError,
)
from ...formatting import refusal
from ...judge import (
    Chain,
    CircuitBreaker,
    JudgeAnswer,
    JudgeConfig,
    JudgeRequest,
    OpenAIJudge,
    TokenUsage,
)
from ...judge.batch_api import (
    MAX_JOB_BYTES,
    MAX_JOB_REQUESTS,
    TOO_LARGE,
    BatchAPI,
    BatchStatus,
    LineOutcome,
    custom_id,
    jsonl_line,
    request_body,
    split_jobs,
    usage_of,
)
from ...scoring import AnyScorer, Jury, Scorer, each_judge
from ...scoring.passing import ReasonPolicy
from ...store import BatchJob, KeepsBatchJobs, Store, open_store
from ...sync import blocking
from ..batch import CacheChoice, ItemCallback, arun_evals, check_scorers
from ..items import Data
from ..results import EvalResult

logger = logging.getLogger("engine.evals")


@dataclass(frozen=True)
class BatchProgress:
    """One batch job's state, reported at every poll."""

    batch_id: str
    model: str
    status: str
    total: int
    completed: int
    failed: int
    resumed: bool = False


ProgressCallback = Callable[[BatchProgress], None]


@dataclass
class _Waiting:
    config: JudgeConfig
    body: dict[str, Any]
    futures: list[asyncio.Future[LineOutcome]] = field(default_factory=list)


class _Jobs:
    """Collects the requests of the running scorers and answers them from batch jobs."""

    def __init__(
        self, *, run: str, store: Store | None, poll_interval: float, settle: float, on_progress: ProgressCallback | None,
        max_job_requests: int, max_job_bytes: int,
    ) -> None:
        self.run = run
        self.max_job_requests = max_job_requests
        self.max_job_bytes = max_job_bytes
        self.store = store if isinstance(store, KeepsBatchJobs) else None
        self.poll_interval = poll_interval
        self.settle = settle
        self.on_progress = on_progress
        self.known: dict[str, LineOutcome] = {}
        self.waiting: dict[str, _Waiting] = {}
        self.apis: dict[tuple[str, str | None], BatchAPI] = {}

    def api(self, config: JudgeConfig) -> BatchAPI:
        return self.apis.setdefault((config.model, config.base_url), BatchAPI(config))

    async def answer(self, config: JudgeConfig, body: dict[str, Any], attempt: int) -> LineOutcome:
        key = custom_id(body, attempt)
        if key in self.known:
            return self.known[key]
        future: asyncio.Future[LineOutcome] = asyncio.get_running_loop().create_future()
        self.waiting.setdefault(key, _Waiting(config, body)).futures.append(future)
        return await future

    async def resume(self, configs: Sequence[JudgeConfig]) -> None:
        """Poll the jobs a stopped run already submitted, and keep their answers."""
        if self.store is None:
            return
        by_model = {config.model: config for config in configs}
        for job in await asyncio.to_thread(self.store.batch_jobs, self.run):
            config = by_model.get(job.model)
            if config is None:
                continue  # a judge this run no longer uses
            status = await self._until_finished(self.api(config), job, resumed=True)
            self.known.update(await self.api(config).outcomes(status))

    async def drive(self, scoring: asyncio.Task[EvalResult]) -> None:
        """Send the waiting requests as jobs whenever the scorers have all stopped to wait."""
        seen = -1
        while not scoring.done():
            await asyncio.wait({scoring}, timeout=self.settle)
            count = len(self.waiting)
            if count and (count == seen or count >= self.max_job_requests):
                await self._flush()
                seen = -1
            else:
                seen = count

    async def _flush(self) -> None:
        waiting, self.waiting = self.waiting, {}
        groups: dict[tuple[str, str | None], dict[str, _Waiting]] = {}
        for key, entry in waiting.items():
            groups.setdefault((entry.config.model, entry.config.base_url), {})[key] = entry
        jobs = []
        for group in groups.values():
            lines = {key: jsonl_line({"custom_id": key, "method": "POST", "url": "/v1/chat/completions", "body": entry.body}) for key, entry in group.items()}
            cut, too_large = split_jobs(lines, self.max_job_requests, self.max_job_bytes)
            for key in too_large:
                self._answer(group[key], LineOutcome(code=TOO_LARGE, message=(
                    f"the request is {len(lines[key]):,} bytes, more than a Batch API job takes ({self.max_job_bytes:,}); "
                    "shorten the item or score it without --batch-api"
                )))
            for job_lines in cut:
                jobs.append(self._job({key: group[key] for key in job_lines}, list(job_lines.values())))
        await asyncio.gather(*jobs)

    async def _job(self, group: dict[str, _Waiting], lines: list[bytes]) -> None:
        config = next(iter(group.values())).config
        api = self.api(config)
        try:
            submitted = await api.submit(lines)
            job = BatchJob(run=self.run, batch_id=submitted.id, model=config.model, status=submitted.status, requests=len(lines))
            await self._remember(job)
            status = await self._until_finished(api, job)
            outcomes = await api.outcomes(status)
        except JudgeError as exc:
            for entry in group.values():
                for future in entry.futures:
                    future.set_exception(exc)
            return
        reason = "; ".join(status.errors) or f"batch {status.id} ended {status.status} without answering it"
        for key, entry in group.items():
            outcome = outcomes.get(key) or LineOutcome(code=f"batch_{status.status}", message=reason)
            self.known[key] = outcome
            self._answer(entry, outcome)

    @staticmethod
    def _answer(entry: _Waiting, outcome: LineOutcome) -> None:
        for future in entry.futures:
            future.set_result(outcome)

    async def _until_finished(self, api: BatchAPI, job: BatchJob, resumed: bool = False) -> BatchStatus:
        while True:
            status = await api.status(job.batch_id)
            if status.status != job.status:
                job = job.model_copy(update={"status": status.status})
                await self._remember(job)
            if self.on_progress is not None:
                self.on_progress(BatchProgress(status.id, job.model, status.status, status.total, status.completed, status.failed, resumed))
            if status.finished:
                return status
            await asyncio.sleep(self.poll_interval)

    async def _remember(self, job: BatchJob) -> None:
        if self.store is not None:
            await asyncio.to_thread(self.store.save_batch_job, job)

    async def close(self) -> None:
        for api in self.apis.values():
            await api.close()


class BatchedJudge:
    """A judge whose calls are lines of the run's batch jobs; answers are validated and
    re-asked as Instructor's JSON-schema mode does for a live call."""

    def __init__(self, config: JudgeConfig, identity: dict[str, Any], jobs: _Jobs) -> None:
        self.config = config
        self.jobs = jobs
        # A batch line asks as a live call in JSON-schema mode does, so the two share
        # answers in the response cache, and a judge set to another mode does not.
        self.identity = identity if config.structured_mode == "json_schema" else {**identity, "mode": "json_schema"}

    @property
    def model(self) -> str:
        return self.config.model

    async def ask(self, request: JudgeRequest) -> JudgeAnswer:
        body = request_body(self.config, request)
        usage = TokenUsage()
        reasks = failures = 0
        while True:
            outcome = await self.jobs.answer(self.config, body, failures)
            if outcome.code == TOO_LARGE:
                raise JudgeRequestError(outcome.message, request.step)
            if outcome.completion is None:
                if outcome.retriable and failures < self.config.http_retries:
                    failures += 1
                    continue
                kind = JudgeServerError if outcome.retriable else JudgeRequestError
                status = f"HTTP {outcome.status_code}" if outcome.status_code else outcome.code or "no answer"
                raise kind(f"the batch answered {status} after {failures + 1} attempt(s): {outcome.message}", request.step)
            usage = usage + usage_of(outcome.completion)
            choice = outcome.completion["choices"][0]
            content = choice["message"].get("content") or ""
            if choice.get("finish_reason") == "length":
                limit = f" of {request.sampling.max_tokens} tokens" if request.sampling.max_tokens else ""
                raise AnswerCutOffError(f"the judge's answer was cut off at its limit{limit}; raise max_tokens for this step", request.step)
            if request.response_model is None:
                return JudgeAnswer(value=content, usage=usage, batch=True)
            try:
                # Inside the scorer's answer scope: the rules that compare with earlier steps apply.
                value = request.response_model.model_validate_json(content)
            except ValidationError as exc:
                if reasks >= request.sampling.reasks:
                    raise InvalidAnswerError(f"the judge's answer failed validation after {reasks + 1} attempt(s): {refusal(exc)}", request.step) from None
                reasks += 1
                body = {
                    **body,
                    "messages": [
                        *body["messages"],
                        {"role": "assistant", "content": content},
                        {"role": "user", "content": f"Your answer was refused: {refusal(exc)}. Answer again with JSON only, fixing that."},
                    ],
                }
                continue
            return JudgeAnswer(value=value, usage=usage, batch=True)


def _batched(scorer: AnyScorer, jobs: _Jobs) -> AnyScorer:
    """The same scorer (plan, options, middleware) with its provider calls made by batch jobs;
    a jury's judges each send theirs; a scorer that asks no judge (computed steps only) runs
    as it is."""
    return each_judge(scorer, lambda member: _batched_scorer(member, jobs))


def _batched_scorer(scorer: Scorer, jobs: _Jobs) -> Scorer:
    if not scorer.plan.needs_judge:
        return scorer
    judge = scorer.judge
    inner = judge.judge if isinstance(judge, Chain) else judge
    if not isinstance(inner, OpenAIJudge):
        raise ConfigError(f"{scorer.id}: the Batch API needs an OpenAI-compatible judge, not {type(inner).__name__}")
    batched = BatchedJudge(inner.config, inner.identity, jobs)
    clone = copy.copy(scorer)
    # The circuit breaker guards live calls; a batch job's lines fail one by one, and its
    # one-call-at-a-time probe would split the first step's job in two.
    middleware = [each for each in judge.middleware if not isinstance(each, CircuitBreaker)] if isinstance(judge, Chain) else []
    clone.judge = Chain(batched, middleware) if middleware else batched
    return clone


async def arun_batch_api(
    data: Data,
    scorers: Sequence[AnyScorer] | AnyScorer,
    *,
    run: str,
    store: Store | str | Path | None,
    on_item_complete: ItemCallback | None = None,
    on_progress: ProgressCallback | None = None,
    thresholds: Mapping[str, float] | None = None,
    max_errors: int | str | None = None,
    min_coverage: float = 1.0,
    gate: str = "mean",
    keep_results: bool = True,
    meta: Mapping[str, Any] | None = None,
    poll_interval: float = 30.0,
    settle: float = 0.5,
    replace: bool = False,
    cache: CacheChoice = True,
    max_job_requests: int = MAX_JOB_REQUESTS,
    max_job_bytes: int = MAX_JOB_BYTES,
    reasons: ReasonPolicy = "always",
) -> EvalResult:
    """Score every item of `data` with every scorer through the provider's Batch API; the
    result is that of `arun_evals`. `run` and `store` are needed to resume: submitted jobs
    are saved there (`replace=True` starts the run over). `on_progress` sees every job's
    state at every poll. The waiting requests go out once none has been added for `settle`
    seconds (every running scorer is waiting), cut into jobs of at most `max_job_requests`
    requests and `max_job_bytes` bytes of input file (OpenAI's limits by default). `cache`
    is the response cache, as for `arun_evals`: questions it has answers for are not sent,
    and every batch answer is kept in it. `thresholds`, `max_errors`, `min_coverage` and
    `gate` decide the verdict, and `reasons` which scores are explained, as for `arun_evals`."""
    listed = check_scorers(scorers)
    if not poll_interval > 0:
        raise ConfigError(f"poll_interval must be positive, got {poll_interval!r}")
    if max_job_requests < 1 or max_job_bytes < 1:
        raise ConfigError(f"a Batch API job needs room for a request, got max_job_requests={max_job_requests}, max_job_bytes={max_job_bytes}")
    opened = open_store(store)
    jobs = _Jobs(
        run=run, store=opened, poll_interval=poll_interval, settle=settle, on_progress=on_progress,
        max_job_requests=max_job_requests, max_job_bytes=max_job_bytes,
    )
    try:
        batched = [_batched(scorer, jobs) for scorer in listed]
        if not replace:
            await jobs.resume([judge.config for scorer in batched for judge in _provider_judges(scorer)])
        scoring = asyncio.create_task(
            arun_evals(
                data, batched, on_item_complete=on_item_complete, concurrency=MAX_JOB_REQUESTS, run=run, store=opened,
                thresholds=thresholds, max_errors=max_errors, min_coverage=min_coverage, gate=gate, keep_results=keep_results,
                meta={**dict(meta or {}), "batch_api": True}, replace=replace, cache=cache, reasons=reasons,
            )
        )
        try:
            await jobs.drive(scoring)
        finally:
            if not scoring.done():
                scoring.cancel()
            await asyncio.gather(scoring, return_exceptions=True)
        return scoring.result()
    finally:
        await jobs.close()
        if opened is not None and opened is not store:
            opened.close()


run_batch_api = blocking(arun_batch_api)


def _provider_judges(scorer: AnyScorer) -> list[BatchedJudge]:
    found = []
    for member in scorer.scorers if isinstance(scorer, Jury) else [scorer]:
        judge = member.judge
        inner = judge.judge if isinstance(judge, Chain) else judge
        if isinstance(inner, BatchedJudge):
            found.append(inner)
    return found

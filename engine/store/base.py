"""What the engine needs from a results store, and what it keeps there.

Every score (batch or live) becomes one `ResultRecord`: what was judged, by which scorer
definition (its fingerprint) and judge model, every step's record, the score or the error,
tokens, latency and timestamps. Runs are named; a batch run is resumable because its records
are keyed by (run, item, scorer) and saved as they complete.

A new database is one more class with the methods of `Store`, registered for its URL scheme
(registry.py); the engine sees only this. What it can do beyond (`SharesWork`,
`KeepsBatchJobs`, `KeepsAlerts`, `ReadsInBulk`) is the methods its class has.
"""

from __future__ import annotations

from datetime import datetime, timezone
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from ..judge import TokenUsage
from ..scrub import scrubbed
from ..scoring import JudgeVerdict, StepRecord

Source = Literal["batch", "live"]
#: What made a run: `eval` and `run_evals` (batch), live scoring, `rescore`, `align`,
#: `pairwise` or the workbench. A run of one kind is never written into by another.
RunKind = Literal["batch", "live", "rescore", "align", "pairwise", "workbench"]
Direction = Literal["higher_is_better", "lower_is_better"]
#: complete: every item scored (or not scorable); incomplete: some failed, a rerun retries
#: them; interrupted: stopped by the user; failed: stopped by an error that ends the run.
RunStatus = Literal["running", "complete", "incomplete", "interrupted", "failed"]
#: What became of one item for one scorer: a score, an error (with its cause), or the
#: scorer's decision that it cannot judge this item (with the reason).
Outcome = Literal["scored", "error", "not_scorable"]
#: Where an error happened: the item could not be read, the target failed, the scorer
#: (judge, inputs) failed, or the callback failed.
Stage = Literal["item", "target", "scorer", "callback", "store"]
#: What became of a field of an item a store did not keep whole: cut at the size limit, not
#: kept at all, or cleared when the retention period ran out.
ContentNote = Literal["truncated", "omitted", "expired"]
#: The item fields whose content a store may limit (re-scoring reads them back).
CONTENT_FIELDS = ("input", "output", "context", "ground_truth", "metadata")


class ResultRecord(BaseModel):
    """One scorer's outcome for one item (or one live reply), as persisted."""

    run: str
    source: Source
    item_id: str = Field(description="The item's `id`, else a stable hash of its content; a live run's id")
    item_index: int | None = Field(default=None, description="The item's line in the batch's data file (its position, 1-based, in a list)")
    scorer_id: str
    scorer_hash: str | None = Field(
        default=None, description="Fingerprint of the scorer: YAML, templates, schemas, options, judge model, mode and sampling"
    )
    item_hash: str | None = Field(default=None, description="Fingerprint of what the scorer read of the item (input, output, context, ground truth)")
    model: str | None = None
    direction: Direction = "higher_is_better"
    score: float | None = None
    reason: str | None = None
    error: str | None = None
    error_stage: Stage | None = None
    not_scorable: str | None = Field(default=None, description="Why the scorer could not judge this item (then no score, no error)")
    input: Any = None
    output: Any = None
    context: list[str] | None = None
    ground_truth: Any = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    expected: bool | float | None = Field(default=None, description="The item's human label for this scorer, if any")
    content_note: dict[str, ContentNote] | None = Field(
        default=None, description="Fields of the item not kept as given (live scoring's limits): truncated, omitted or expired"
    )
    steps: dict[str, StepRecord] = Field(default_factory=dict, description="Per step: prompt, system prompt, result, usage, skipped")
    judges: list[JudgeVerdict] | None = Field(default=None, description="A jury's judges, each with its own score and reason")
    disagreement: bool | None = Field(default=None, description="A jury's judges disagreed")
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    latency_ms: float | None = None
    started_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    finished_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))

    @property
    def ok(self) -> bool:
        return self.error is None and self.score is not None

    @property
    def outcome(self) -> Outcome:
        if self.not_scorable is not None and self.error is None:
            return "not_scorable"
        return "scored" if self.ok else "error"

    def scrubbed(self) -> ResultRecord:
        """The record with every secret masked (engine/scrub.py) in what it quotes: the item's
        fields, the prompts and answers of its steps (a judge's claims quote the output), the
        reasons and errors. Every runner stores records in this form; scores, tokens and
        fingerprints are unchanged."""

        def steps(found: Mapping[str, StepRecord]) -> dict[str, StepRecord]:
            return {
                step_id: step.model_copy(
                    update={"prompt": scrubbed(step.prompt), "system_prompt": scrubbed(step.system_prompt), "result": scrubbed(step.result),
                            "thinking": scrubbed(step.thinking)}
                )
                for step_id, step in found.items()
            }

        judges = [judge.model_copy(update={"reason": scrubbed(judge.reason), "steps": steps(judge.steps)}) for judge in self.judges] if self.judges else self.judges
        return self.model_copy(
            update={
                **{field: scrubbed(getattr(self, field)) for field in CONTENT_FIELDS},
                "reason": scrubbed(self.reason), "error": scrubbed(self.error), "not_scorable": scrubbed(self.not_scorable),
                "steps": steps(self.steps), "judges": judges,
            }
        )


class RunInfo(BaseModel):
    """A named run: batch runs are resumable under their name; live runs collect replies."""

    name: str
    source: Source = "batch"
    status: RunStatus = "running"
    created_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    updated_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    meta: dict[str, Any] = Field(default_factory=dict, description="What was run: data, scorers, models, concurrency, thresholds")

    @property
    def kind(self) -> RunKind:
        """What made the run, as it recorded when it was created; runs stored before runs
        recorded it are told apart by what their meta holds."""
        recorded = self.meta.get("kind")
        if recorded in ("batch", "live", "rescore", "align", "pairwise", "workbench"):
            return recorded  # type: ignore[no-any-return]
        if self.source == "live":
            return "live"
        if "rescored_from" in self.meta:
            return "rescore"
        if "pairwise" in self.meta:
            return "pairwise"
        return "batch"


class ScoreStats(BaseModel):
    """Aggregates of one scorer's records in a run: the mean is over scored items only;
    errors and items the scorer could not judge are counted beside it."""

    scorer_id: str
    direction: Direction = "higher_is_better"
    count: int = Field(default=0, description="Items scored")
    mean: float | None = None
    min: float | None = None
    max: float | None = None
    errors: int = 0
    not_scorable: int = 0

    @property
    def total(self) -> int:
        return self.count + self.errors + self.not_scorable


class RunLease(BaseModel):
    """Which process is running a run now: one at a time may resume it."""

    run: str
    owner: str
    pid: int
    host: str
    expires_at: datetime


class ScorerUsage(BaseModel):
    """Tokens one scorer of a run spent, from its stored records (for cost)."""

    scorer_id: str
    model: str | None = None
    judge_calls: int = Field(default=0, description="Steps answered by a provider")
    cached_calls: int = Field(default=0, description="Steps answered by the response cache (free)")
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = Field(default=0, description="Prompt tokens served from the provider's prefix cache")
    reasoning_tokens: int = 0
    batch: bool = Field(default=False, description="Asked through the provider's Batch API (billed at its batch price)")

    def tokens(self) -> TokenUsage:
        return TokenUsage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            total_tokens=self.prompt_tokens + self.completion_tokens,
            cached_prompt_tokens=self.cached_prompt_tokens,
            reasoning_tokens=self.reasoning_tokens,
        )


class BatchJob(BaseModel):
    """A provider Batch API job submitted for a run: kept so that a stopped run resumes
    polling it instead of paying for its requests twice."""

    run: str
    batch_id: str
    model: str
    status: str = Field(description="The provider's state: validating, in_progress, completed, expired, failed, ...")
    requests: int = 0
    created_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    updated_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))


class ClaimedItem(BaseModel):
    """An item of a shared run, claimed by one worker until its lease runs out."""

    index: int
    payload: Any


class RunSummary(RunInfo):
    items: int = 0
    scorers: list[ScoreStats] = Field(default_factory=list)


def merged_meta(stored: Mapping[str, Any] | None, meta: Mapping[str, Any] | None, added: Mapping[str, int] | None) -> dict[str, Any]:
    """A run's meta after `end_run`: `meta` merged in, each of `added` added to its number."""
    merged = {**(stored or {}), **(meta or {})}
    for key, value in (added or {}).items():
        before = merged.get(key)
        merged[key] = (before if isinstance(before, int) else 0) + value
    return merged


@runtime_checkable
class Store(Protocol):
    """What the engine needs from a results store. Implementations must be safe to call
    from several threads of one process."""

    def begin_run(self, run: RunInfo) -> RunInfo:
        """Create the run, or mark an existing one running again (keeping its records and its
        creation time); returns the stored run."""
        ...

    def end_run(self, name: str, status: RunStatus, meta: dict[str, Any] | None = None, added: Mapping[str, int] | None = None) -> None:
        """Set the run's status; `meta` (when given) is merged into the run's meta, and each
        of `added` is added to the meta's number of that name, in the same transaction (every
        invocation and every worker sharing the run adds its own count)."""
        ...

    def delete_run(self, name: str) -> None:
        """Forget the run and every record of it."""
        ...

    def prune_run(self, name: str, keep: set[str]) -> int:
        """Delete the run's records of items whose id is not in `keep` (items no longer in
        its data); returns how many items went."""
        ...

    def lease_run(self, lease: RunLease) -> RunLease | None:
        """Take or renew the run's lease for `lease.owner`; returns the other owner's lease
        instead when one holds it and it has not expired."""
        ...

    def release_run(self, name: str, owner: str) -> None: ...

    def get_run(self, name: str) -> RunInfo | None: ...

    def save(self, record: ResultRecord) -> None:
        """Insert, or replace the record of the same (run, item_id, scorer_id)."""
        ...

    def save_many(self, records: list[ResultRecord]) -> None:
        """`save` for several records at once (one transaction where the store has them)."""
        ...

    def usage(self, run: str) -> list[ScorerUsage]:
        """Per scorer and judge model, the tokens and calls of the run's records."""
        ...

    def item_records(self, run: str, item_id: str) -> list[ResultRecord]: ...

    def scorer_versions(self, run: str) -> dict[str, set[tuple[str | None, str | None]]]:
        """Per scorer, the (scorer_hash, model) pairs of the run's successful records."""
        ...

    def query(
        self,
        run: str | None = None,
        scorer: str | None = None,
        source: Source | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        errors: bool | None = None,
        worst_first: bool = False,
        limit: int | None = None,
    ) -> list[ResultRecord]: ...

    def summary(self, run: str) -> list[ScoreStats]: ...

    def runs(self) -> list[RunSummary]: ...

    def close(self) -> None: ...


@runtime_checkable
class KeepsBatchJobs(Protocol):
    """A store that remembers a run's provider Batch API jobs (both built-in stores do), so a
    stopped `--batch-api` run resumes polling them."""

    def save_batch_job(self, job: BatchJob) -> None:
        """Insert a run's batch job, or update its status."""
        ...

    def batch_jobs(self, run: str) -> list[BatchJob]:
        """The run's batch jobs, oldest first."""
        ...


class AlertRecord(BaseModel):
    """An alert a monitor raised: when its condition started holding (`alert`) or stopped
    (`recovery`), with what it measured. An alert and its recovery share their `episode`."""

    monitor: str
    scorer_id: str
    kind: Literal["alert", "recovery"]
    value: float | None = None
    message: str
    payload: dict[str, Any] = Field(default_factory=dict, description="The alert as sent: figures, window, worst items")
    fired_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    episode: str | None = Field(default=None, description="The episode the alert opens or the recovery closes (a receiver de-duplicates on it)")
    id: int | None = Field(default=None, description="The store's id of the alert")


#: pending: not taken yet (retried); delivered: a receiver answered 2xx; refused: it answered
#: an error that asking again cannot mend (a 4xx other than 429).
DeliveryState = Literal["pending", "delivered", "refused"]


class AlertDelivery(BaseModel):
    """One alert to one webhook, kept in the store's outbox until the receiver takes it."""

    id: int
    alert: AlertRecord
    target: str = Field(description="Which webhook: a digest of its address, never the address (it may hold a secret)")
    where: str = Field(description="The webhook as messages name it: scheme and host, or its variable")
    state: DeliveryState = "pending"
    attempts: int = 0
    next_attempt_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    last_error: str | None = None
    delivered_at: datetime | None = None
    #: The process posting it now (`claim_delivery`), and until when its claim holds.
    claimed_by: str | None = None
    claimed_until: datetime | None = None


@runtime_checkable
class KeepsAlerts(Protocol):
    """A store that keeps monitors' alerts, with an outbox of their deliveries to webhooks,
    and limits how long live items' content is kept (both built-in stores do): `scorers
    monitor` shows the last alerts of every process, and an alert is sent until a receiver
    takes it, whichever process or restart sends it."""

    def save_alert(self, alert: AlertRecord, deliveries: Sequence[tuple[str, str]] = ()) -> AlertRecord | None:
        """Keep the alert and, in the same transaction, a pending delivery to each webhook of
        `deliveries` (target digest, name for messages); the alert as stored (with its id).
        A compare-and-set of the monitor's state: an `alert` is kept only when the monitor's
        last stored alert is not an alert, a `recovery` only when it is the alert of the
        episode it closes; None when another process changed the state first."""
        ...

    def alerts(self, monitor: str | None = None, limit: int = 20) -> list[AlertRecord]:
        """The newest alerts first (of one monitor, or of all)."""
        ...

    def deliveries(self, *, pending_only: bool = True, due_by: datetime | None = None, monitor: str | None = None) -> list[AlertDelivery]:
        """Deliveries, oldest alert first: the pending ones (due by `due_by`, when given), or all."""
        ...

    def record_delivery(self, delivery: AlertDelivery) -> None:
        """Keep what an attempt at a delivery came to: its state, attempts, next attempt and
        error; its claim ends."""
        ...

    def claim_delivery(self, delivery_id: int, owner: str, seconds: float, *, taking_from: str | None = None) -> AlertDelivery | None:
        """Hold a pending delivery for `owner` for `seconds` (again: renewed), unless another
        holds it whose claim has not run out (`taking_from` names a holder known to be dead);
        the delivery as it stands now (held by `owner` when taken), None when there is none."""
        ...

    def release_delivery(self, delivery_id: int, owner: str) -> None:
        """End `owner`'s claim of the delivery, leaving it as it was."""
        ...

    def expire_content(self, run: str, before: datetime) -> int:
        """Clear the item fields (CONTENT_FIELDS) of the run's live records finished before
        `before`, keeping their scores; returns how many records were cleared."""
class LabelledScore(NamedTuple):
    """A scored item's score beside its human label, and nothing heavier: what agreement is
    measured on, read in bulk (a plain tuple: a big run has a hundred thousand)."""

    item_id: str
    item_index: int | None
    score: float
    expected: bool | float
    reason: str | None


class StoredRecord(NamedTuple):
    """A record's fields as they were saved, for an export that writes them through without
    reading them back into a ResultRecord (a plain tuple: a big run has a hundred thousand)."""

    #: The plain fields (ids, score, reason, error, model, tokens, latency, finished_at) as
    #: the record holds them.
    fields: dict[str, Any]
    #: The item's fields (CONTENT_FIELDS) and its label, each the JSON text saved (None: none).
    texts: dict[str, str | None]
    #: Each step's answer (its result), the JSON text saved (None: no answer).
    answers: dict[str, str | None]


@runtime_checkable
class ReadsInBulk(Protocol):
    """A store that hands over a big run's figures without loading its records (both built-in
    stores do, in SQL): `scorers results` and the report read a run of any size in flat
    memory through it. A store without these methods is read record by record."""

    def score_values(self, run: str, scorer: str) -> list[float]:
        """The scorer's scores in the run (scored items only), in ascending order."""
        ...

    def labelled_scores(self, run: str, scorer: str) -> list[LabelledScore]:
        """The scored items that carry a human label, in the data's order."""
        ...

    def item_ids(self, run: str, limit: int, every: int = 1) -> list[str]:
        """Up to `limit` of the run's item ids, in the data's order, every `every`th one."""
        ...

    def item_count(self, run: str) -> int:
        """How many items the run holds."""
        ...

    def ordered_ids(self, run: str) -> list[int]:
        """The run's record ids in the data's order (then item id, then scorer id)."""
        ...

    def records_by_id(self, ids: list[int]) -> list[ResultRecord]:
        """The records of `ids`, in that order."""
        ...

    def step_ids(self, ids: list[int]) -> list[str]:
        """The step ids of the records of `ids`, each once, in the order they first appear."""
        ...

    def stored_records(self, ids: list[int]) -> list[StoredRecord]:
        """The records of `ids` as saved, in that order (what `records_by_id` would give, as
        JSON text where the record holds JSON)."""
        ...


@runtime_checkable
class SharesWork(Protocol):
    """A store that several worker processes (on several machines) can split one run through:
    each worker queues the run's items (the first to do so wins; the others' copies are
    ignored), then claims a few at a time under a lease. A worker that dies leaves its claimed
    items to the others once the lease runs out. A store without these methods (SQLite) runs
    every item in the one process that runs the batch."""

    def queue_items(self, run: str, items: list[tuple[int, str | None, Any]]) -> None:
        """Add (index, item id, payload) to the run's queue. An index already queued keeps its
        payload while it is unfinished (workers starting together queue the same items); a
        finished one takes the new payload, so a rerun after the data changed judges it anew."""
        ...

    def reopen(self, run: str) -> int:
        """Queue every finished item again: a rerun of an ended run goes over all its items as
        a local rerun does (saved scores are loaded, failed ones judged again); returns how
        many."""
        ...

    def claim(self, run: str, worker: str, limit: int, lease_s: float) -> list[ClaimedItem]:
        """Up to `limit` unfinished items nobody holds (or whose lease ran out), now held by
        `worker` for `lease_s` seconds."""
        ...

    def renew(self, run: str, worker: str, indexes: list[int], lease_s: float) -> None: ...

    def finish(self, run: str, worker: str, indexes: list[int]) -> None: ...

    def unfinished(self, run: str) -> int:
        """Items of the run not finished yet (queued or held by some worker)."""
        ...

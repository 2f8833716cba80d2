"""The stored form of one scorer's outcome, shared by batch and live scoring, and back."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from ..scoring import AnyScorer, ScoreResult
from ..store import ResultRecord, Source, Stage
from .results import ScorerOutcome


def result_record(
    scorer: AnyScorer,
    *,
    run: str,
    source: Source,
    item_id: str,
    item_index: int | None,
    item_hash: str | None = None,
    input: Any,
    output: Any,
    context: list[str] | None,
    ground_truth: Any = None,
    metadata: Mapping[str, Any] | None = None,
    expected: bool | float | None = None,
    result: ScoreResult | None = None,
    error: str | None = None,
    error_stage: Stage | None = None,
    not_scorable: str | None = None,
    started_at: datetime,
) -> ResultRecord:
    """The stored form of one scorer's outcome (shared by batch and live scoring), secrets
    masked (`ResultRecord.scrubbed`)."""
    finished = datetime.now(timezone.utc)
    record = ResultRecord(
        run=run,
        source=source,
        item_id=item_id,
        item_index=item_index,
        scorer_id=scorer.id,
        scorer_hash=scorer.fingerprint,
        item_hash=item_hash,
        model=scorer.judge.model,
        direction=scorer.plan.direction,
        error=error,
        error_stage=error_stage,
        not_scorable=not_scorable,
        input=input,
        output=output,
        context=context,
        ground_truth=ground_truth,
        metadata=dict(metadata or {}),
        expected=expected,
        latency_ms=(finished - started_at).total_seconds() * 1000,
        started_at=started_at,
        finished_at=finished,
    )
    if result is not None:
        usage = result.usage
        record.score = result.score
        record.reason = result.reason
        record.steps = dict(result.steps)
        record.judges = result.judges
        record.disagreement = result.disagreement
        if record.context is None:
            record.context = result.context
        record.prompt_tokens = usage.prompt_tokens
        record.completion_tokens = usage.completion_tokens
        record.total_tokens = usage.total_tokens
        record.latency_ms = result.duration_ms
    return record.scrubbed()


def outcome_of(record: ResultRecord, result: ScoreResult | None = None, resumed: bool = False) -> ScorerOutcome:
    return ScorerOutcome(
        scorer_id=record.scorer_id,
        score=record.score,
        reason=record.reason,
        steps=record.steps,
        judges=record.judges,
        disagreement=record.disagreement,
        error=record.error,
        error_stage=record.error_stage,
        not_scorable=record.not_scorable,
        resumed=resumed,
        total_tokens=record.total_tokens,
        latency_ms=record.latency_ms,
        result=result,
    )

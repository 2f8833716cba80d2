"""Which replies a live scorer scores: a rate per scorer, decided by a hash of the run id so
the same runs are picked on every replay; and the counters of what happened to them."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from pydantic import BaseModel, Field

from ...errors import ConfigError
from ...scoring import AnyScorer


class LiveStats(BaseModel):
    """Counters since the scorer was created."""

    calls: int = Field(default=0, description="Replies seen")
    filtered: int = Field(default=0, description="Replies the filter turned away (or could not judge), before sampling")
    queued: int = Field(default=0, description="Replies accepted for scoring (at least one scorer sampled)")
    dropped: int = Field(default=0, description="Sampled replies refused because the queue was full (or after close)")
    pending: int = Field(default=0, description="Replies queued or being scored now")
    sampled: dict[str, int] = Field(default_factory=dict, description="Per scorer: replies it was sampled for")
    scored: dict[str, int] = Field(default_factory=dict, description="Per scorer: scores recorded")
    errors: dict[str, int] = Field(default_factory=dict, description="Per scorer: failures recorded")
    not_scorable: dict[str, int] = Field(default_factory=dict, description="Per scorer: replies it could not judge (e.g. no context)")


def sample_point(run_id: str, seed: int | None = None) -> float:
    """Where a run falls in [0, 1): a hash of its id (and the seed), so a run is sampled at
    rate r when this is below r. The same runs are picked by every scorer at one rate, on
    every replay and in every process; a lower rate picks a subset of a higher one's runs."""
    digest = hashlib.sha256(f"{seed if seed is not None else ''}:{run_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def sampling_rates(sampling: float | Mapping[str, float], scorers: list[AnyScorer]) -> dict[str, float]:
    ids = {scorer.id for scorer in scorers}
    if isinstance(sampling, Mapping):
        unknown = sorted(set(sampling) - ids)
        if unknown:
            raise ConfigError(f"sampling rate for {', '.join(unknown)}, which is not among the attached scorers")
        rates = {scorer.id: float(sampling.get(scorer.id, 1.0)) for scorer in scorers}
    else:
        rates = {scorer.id: float(sampling) for scorer in scorers}
    for scorer_id, rate in rates.items():
        if not 0.0 <= rate <= 1.0:
            raise ConfigError(f"sampling rate of {scorer_id} must be between 0 and 1, got {rate:g}")
    return rates

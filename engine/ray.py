"""`engine.ray.score_dataset`: scoring a Ray Dataset with the engine's scorers (the `ray`
extra). See engine/runs/scale/ray.py."""

from __future__ import annotations

from .runs.scale.ray import ScoringActor, score_dataset

__all__ = ["ScoringActor", "score_dataset"]

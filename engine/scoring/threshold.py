"""A threshold is a scorer's pass line, and it means one thing everywhere: a score passes
when it lies on the scorer's good side of the line or on the line itself, and flags its item
otherwise. `passes` and `flags` are exact complements, so a run's gate, a jury's verdicts,
a monitor's pass rate and agreement with human labels can never disagree about one score."""

from __future__ import annotations

from .plan import Direction


def passes(score: float, threshold: float, direction: Direction) -> bool:
    """Whether `score` passes: at most `threshold` when lower is better, at least it
    otherwise. A score equal to the threshold passes."""
    return score <= threshold if direction == "lower_is_better" else score >= threshold


def flags(score: float, threshold: float, direction: Direction) -> bool:
    """Whether `score` flags its item: strictly past `threshold` on the scorer's worse side
    (the complement of `passes`)."""
    return not passes(score, threshold, direction)


def past_word(direction: Direction) -> str:
    """How a message says which scores flag: 'above' when lower is better, else 'below'."""
    return "above" if direction == "lower_is_better" else "below"

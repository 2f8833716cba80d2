"""Rounding that keeps the resolution of a score's range: `round: 0` on a score from 0 to 1
leaves only 0 and 1 (a share of 0.3 shows as 0). Held for every scorer, judged or not."""

from __future__ import annotations


def rounding_too_coarse(label: str, digits: int | None, score_range: tuple[float, float] | None) -> str | None:
    """The problem of a score rounded to `digits` decimals on `score_range`, or None."""
    if digits is None or score_range is None:
        return None
    low, high = score_range
    step = 10.0 ** -digits
    if not (high > low and step * 2 > high - low):
        return None
    shown = ", ".join(f"{value:g}" for value in sorted({low, high, round((low + high) / 2, digits)}))
    return (
        f"{label}.score.round: rounding to {digits} decimal{'s' if digits != 1 else ''} on a score from {low:g} to {high:g} "
        f"leaves only {shown}: a share of 0.3 shows as {round(low + 0.3 * (high - low), digits):g}; round to 2"
    )

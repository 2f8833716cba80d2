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


def rounding_across_the_line(label: str, digits: int | None, score_range: tuple[float, float] | None, line: float | None, higher: bool) -> str | None:
    """The warning of a score rounded so coarsely beside its pass line that scores a step short
    of it pass (`round: 1` with the line at 0.8: a 0.75 shows as 0.8), or None."""
    if digits is None or score_range is None or line is None:
        return None
    low, high = score_range
    step = 10.0 ** -digits
    if not high > low or step * 2 > high - low or step / 2 < 0.02 * (high - low) or not low <= line <= high:
        return None
    short = round(line - step / 2 if higher else line + step / 2 - step / 10, digits + 2)
    if not low <= short <= high:
        return None
    return (
        f"{label}.score.round: rounding to {digits} decimal{'s' if digits != 1 else ''} moves scores up to {step / 2:g} onto the pass line, "
        f"{line:g}: a {short:g} shows as {round(short, digits):g} and passes; round to {digits + 1}"
    )

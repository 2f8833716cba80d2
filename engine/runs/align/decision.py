"""Whether align keeps what it found: only on held-out evidence, the improvement's 95% interval
on the untouched test split lying above 0 (below, for mean absolute error). One rule, worded
the same, for a candidate prompt and for a cascade's margin (and, through `beyond_noise`, for
a map of the judge's confidence: see runs/confidence_map.py)."""

from __future__ import annotations

from pathlib import Path

from ..results import FigureEstimate
from .results import AlignResult


def shown(value: float | None) -> str:
    """A figure of align's verdicts: three decimals."""
    return "-" if value is None else f"{value:.3f}"


def beyond_noise(change: FigureEstimate, lower_is_better: bool) -> bool:
    """Whether a change measured on held-out items is an improvement beyond noise: its 95%
    interval lies wholly on the better side of 0."""
    if change.low is None or change.high is None:
        return False
    return change.high < 0 if lower_is_better else change.low > 0


def accepted_on_test(result: AlignResult, kind: str, best: str, output_dir: str | Path | None) -> Path | None:
    """The folder to write the variant to when the test split shows `best` (the `kind` tried:
    "candidate", "margin") better beyond noise; None, with the verdict saying why, when not."""
    delta = result.test_delta
    if delta is None or delta.delta.low is None or delta.delta.high is None:
        result.verdict = f"The best {kind} on dev ({best}) could not be measured on test: nothing was changed."
        return None
    interval = f"{delta.delta.value:+.3f}, 95% interval {delta.delta.low:+.3f} to {delta.delta.high:+.3f}"
    if not beyond_noise(delta.delta, result.metric == "mae"):
        rival = "the current scorer" if kind == "candidate" else "the current one"
        result.verdict = (
            f"No {kind} beat {rival} beyond noise: the best on dev ({best}) changed {delta.title} on test by "
            f"{interval}, an interval that does not lie {'below' if result.metric == 'mae' else 'above'} 0. Nothing was changed."
        )
        return None
    result.accepted = True
    folder = Path(output_dir) if output_dir is not None else Path("variants") / f"{result.scorer_id}-aligned"
    result.variant_dir = str(folder)
    result.verdict = (
        f"Accepted: {'; '.join(result.chosen)}. On the untouched test split {delta.title} went from {shown(delta.baseline)} to "
        f"{shown(delta.variant)} ({interval}). Written to {folder}."
    )
    return folder

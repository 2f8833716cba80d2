"""Whether align keeps what it found: only on held-out evidence, the improvement's 95% interval
on the untouched test split lying above 0 (below, for mean absolute error). One rule, worded
the same, for a candidate prompt and for a cascade's margin."""

from __future__ import annotations

from pathlib import Path

from .results import AlignResult


def shown(value: float | None) -> str:
    """A figure of align's verdicts: three decimals."""
    return "-" if value is None else f"{value:.3f}"


def accepted_on_test(result: AlignResult, kind: str, best: str, output_dir: str | Path | None) -> Path | None:
    """The folder to write the variant to when the test split shows `best` (the `kind` tried:
    "candidate", "margin") better beyond noise; None, with the verdict saying why, when not."""
    delta = result.test_delta
    if delta is None or delta.delta.low is None or delta.delta.high is None:
        result.verdict = f"The best {kind} on dev ({best}) could not be measured on test: nothing was changed."
        return None
    interval = f"{delta.delta.value:+.3f}, 95% interval {delta.delta.low:+.3f} to {delta.delta.high:+.3f}"
    if not (delta.delta.high < 0 if result.metric == "mae" else delta.delta.low > 0):
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

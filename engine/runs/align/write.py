"""The accepted candidate written beside the original, never over it: a variant catalog
(scorers.yaml and its templates), ALIGNED.md (the diff, the figures before and after with
their intervals, the items whose verdict flipped) and align.json (all of it, as data)."""

from __future__ import annotations

import datetime
from pathlib import Path

from ...errors import ConfigError
from ..results import Comparison, VerdictChange
from .results import AlignResult
from .variants import Change, Workshop


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _figures_table(comparison: Comparison) -> list[str]:
    rows = ["| figure | before | after | change (95% interval) |", "| --- | --- | --- | --- |"]
    for figure in comparison.figures:
        delta = figure.delta
        interval = f" ({_figure(delta.low)} to {_figure(delta.high)})" if delta.low is not None else ""
        rows.append(f"| {figure.title} | {_figure(figure.baseline)} | {_figure(figure.variant)} | {_figure(delta.value)}{interval} |")
    return rows


def _flipped(title: str, changes: list[VerdictChange]) -> list[str]:
    if not changes:
        return [f"{title}: none."]
    lines = [f"{title}:", ""]
    lines += [f"- {change.item_id}: label {change.expected}, score {change.baseline_score:g} -> {change.variant_score:g}" for change in changes]
    return lines


def aligned_markdown(result: AlignResult, diff: str) -> str:
    assert result.test is not None
    lines = [
        f"# {result.scorer_id}, aligned", "", result.verdict, "",
        f"Split (seed {result.seed}): {result.split.train} train, {result.split.dev} dev, {result.split.test} test items. "
        f"Chosen on dev by {result.metric}; measured once on test against the scorer as it was, "
        "with paired bootstrap 95% intervals (the same resampled items for both).", "",
        "## What changed", "", *(f"- {change}" for change in result.chosen), "", "```diff", diff, "```", "",
        f"## Figures on test ({result.test.items} items)", "", *_figures_table(result.test), "",
        "## Items whose verdict flipped", "", *_flipped("Fixed (wrong before, right now)", result.test.fixed), "",
        *_flipped("Broken (right before, wrong now)", result.test.broken), "",
    ]
    return "\n".join(lines)


def write_variant(workshop: Workshop, change: Change, result: AlignResult, folder: Path) -> Path:
    """The variant catalog in `folder` (refused when that is where the original lives)."""
    original = workshop.catalog.path.parent.resolve()
    if folder.resolve() == original:
        raise ConfigError(f"{folder} holds the catalog being aligned: the aligned variant goes beside it, never over it (-o another folder)")
    today = datetime.date.today().isoformat()
    header = (
        f"# Written by `scorers align` on {today}: a variant of {result.scorer_id} (see ALIGNED.md for the figures and the diff).\n"
        f"# Compare it with the original: scorers compare DATA --scorer {result.scorer_id} --config {folder}\n"
    )
    if change.threshold is not None:
        header += f"# Its calibrated threshold: --threshold {result.scorer_id}={change.threshold:g}\n"
    path = workshop.write(change, folder, header, standalone=True)
    (folder / "ALIGNED.md").write_text(aligned_markdown(result, workshop.diff(change)), encoding="utf-8")
    (folder / "align.json").write_text(result.model_dump_json(indent=2), encoding="utf-8")
    return path

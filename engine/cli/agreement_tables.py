"""How agreement with human labels, and the comparison of two variants, read in a terminal."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..formatting import to_json
from ..runs import Agreement, Comparison, FigureEstimate
from ..runs.results import Calibration
from ..runs.measures.stats import FIGURE_TITLES
from ..runs.results import CascadeSummary
from ..scoring.pass_line import Direction
from ..scoring.pass_line import past_word
from .tables import better_word, figure

BINARY_FIGURES = ("accuracy", "balanced_accuracy", "precision", "recall", "f1", "kappa")
NUMERIC_FIGURES = ("mean_abs_error", "pearson", "spearman")


def interval(estimate: FigureEstimate) -> str:
    if estimate.low is None or estimate.high is None:
        return "-"
    return f"{figure(estimate.low)} to {figure(estimate.high)}"


def compact(value: Any) -> str:
    """An answer as short text: a one-field object is its field, a list its items by `;`,
    an object its values by `→` (so a verdict reads `claim → yes → why`)."""
    if isinstance(value, dict):
        if len(value) == 1:
            return compact(next(iter(value.values())))
        return " → ".join(compact(item) for item in value.values())
    if isinstance(value, list):
        return "; ".join(compact(item) for item in value) or "(none)"
    return value if isinstance(value, str) else to_json(value)


def judged_line(judged: dict[str, Any], width: int = 300) -> str:
    """The last judge answer before the score (claims with their verdicts and reasons, for
    most scorers), in one line: what a tuner reads to see why it went wrong."""
    if not judged:
        return ""
    step, answer = list(judged.items())[-1]
    return " ".join(f"{step}: {compact(answer)}".split())[:width]


def agreement_line(agreement: Agreement) -> str:
    """The headline figures in one line, each with its interval."""
    parts = []
    if agreement.binary is not None:
        parts += [f"{FIGURE_TITLES[name]} {figure(getattr(agreement.binary, name).value)} ({interval(getattr(agreement.binary, name))})" for name in ("f1", "kappa", "accuracy")]
    if agreement.numeric is not None:
        parts += [f"{FIGURE_TITLES[name]} {figure(getattr(agreement.numeric, name).value)} ({interval(getattr(agreement.numeric, name))})" for name in ("spearman", "mean_abs_error")]
    return f"{agreement.labelled} labelled: " + ", ".join(parts)


def calibration_line(calibration: Calibration) -> str:
    """How well the judge's confidence tells when people agree with it, and its reliability
    curve, in words."""
    curve = ", ".join(f"{point.low:.0%}-{point.high:.0%}: {point.agreement:.0%} agreed of {point.items}" for point in calibration.curve)
    return (
        f"Confidence against people ({calibration.items} item(s)): calibration error {figure(calibration.ece.value)} ({interval(calibration.ece)}), "
        f"AUROC {figure(calibration.auroc.value)} ({interval(calibration.auroc)}); reliability by confidence: {curve}."
    )


def print_agreement(console: Console, scorer_id: str, direction: Direction, agreement: Agreement, worst: int = 5) -> None:
    table = Table(title=f"{scorer_id} against {agreement.labelled} human label(s)", title_justify="left")
    for column in ("figure", "value", "95% interval"):
        table.add_column(column, justify="left" if column == "figure" else "right", no_wrap=True)
    if agreement.binary is not None:
        binary = agreement.binary
        for name in BINARY_FIGURES:
            estimate: FigureEstimate = getattr(binary, name)
            table.add_row(FIGURE_TITLES[name], figure(estimate.value), interval(estimate))
    if agreement.numeric is not None:
        for name in NUMERIC_FIGURES:
            estimate = getattr(agreement.numeric, name)
            table.add_row(FIGURE_TITLES[name], figure(estimate.value), interval(estimate))
    console.print(table)
    if agreement.binary is not None:
        binary = agreement.binary
        counts = binary.confusion
        side = past_word(direction)
        console.print(
            f"A score {side} {figure(binary.threshold)} flags an item; on it, it passes ({better_word(direction)} is better). "
            f"Flagged by judge and humans {counts.true_positive}, by the judge only {counts.false_positive}, "
            f"by the humans only {counts.false_negative}, by neither {counts.true_negative}.",
            highlight=False,
        )
    if agreement.calibration is not None:
        console.print(calibration_line(agreement.calibration), highlight=False, soft_wrap=True)
    if agreement.disagreements and worst:
        table = Table(title=f"{scorer_id}: worst disagreements ({max(agreement.disagreement_count, len(agreement.disagreements))} in all)", title_justify="left")
        for column in ("item", "score", "expected", "reason", "judge said"):
            table.add_column(column, overflow="fold")
        for item in agreement.disagreements[:worst]:
            expected = ("flag" if item.expected else "pass") if isinstance(item.expected, bool) else figure(item.expected)
            table.add_row(item.item_id, figure(item.score), expected, " ".join((item.reason or "").split())[:160], judged_line(item.judged))
        console.print(table)


def _label(expected: bool | float) -> str:
    return ("flag" if expected else "pass") if isinstance(expected, bool) else figure(expected)


def print_comparison(console: Console, comparison: Comparison) -> None:
    a, b = comparison.baseline, comparison.variant
    console.print(f"[bold]A[/bold] = {a}, [bold]B[/bold] = {b}, on {comparison.items} shared labelled item(s):", highlight=False)
    table = Table()
    for column in ("figure", "A", "B", "B - A", "95% interval", "beyond noise"):
        table.add_column(column, justify="left" if column == "figure" else "right", no_wrap=column != "figure")
    for delta in comparison.figures:
        beyond = "" if delta.beyond_noise is None else ("[bold]yes[/bold]" if delta.beyond_noise else "no")
        table.add_row(
            FIGURE_TITLES[delta.name], figure(delta.baseline), figure(delta.variant), _signed(delta.delta.value),
            "-" if delta.delta.low is None else escape(f"[{figure(delta.delta.low)}, {figure(delta.delta.high)}]"), beyond,
        )
    console.print(table)
    console.print(
        f"Verdicts changed on {len(comparison.fixed) + len(comparison.broken)} item(s): "
        f"fixed {len(comparison.fixed)} (now agree with the humans), broken {len(comparison.broken)} (no longer agree); "
        f"scores changed on {comparison.score_changed}.",
        highlight=False,
    )
    for word, changes in (("fixed", comparison.fixed), ("broken", comparison.broken)):
        for change in changes[:10]:
            console.print(
                f"  {word} {change.item_id}: {figure(change.baseline_score)} -> {figure(change.variant_score)} (expected {_label(change.expected)})",
                highlight=False,
            )
        if len(changes) > 10:
            console.print(f"  ... and {len(changes) - 10} more {word}", highlight=False)


def _signed(value: float | None) -> str:
    if value is None:
        return "-"
    return "0" if value == 0 else f"{value:+.3g}"


def cascade_line(scorer_id: str, cascade: CascadeSummary) -> str:
    """What a cascade sent to its strong judge and what that cost, beside the cheap judge alone."""
    share = f" ({cascade.escalated / cascade.items:.0%})" if cascade.items else ""
    why = ", ".join(f"{cause} {count}" for cause, count in sorted(cascade.why.items()))
    costs = [f"{value:.0%} of the {what}" for what, value in (("cost", cascade.strong_cost_share), ("judge calls", cascade.strong_call_share)) if value is not None]
    line = f"{scorer_id} cascade {cascade.cheap} > {cascade.strong}: {cascade.escalated} of {cascade.items} item(s){share} went to {cascade.strong}"
    line += f" ({why})" if why else ""
    line += f", {' and '.join(costs)}" if costs else ""
    if cascade.cheap_alone is not None:
        line += f"; {cascade.cheap} alone against the labels: {agreement_line(cascade.cheap_alone)}"
    return line

"""`align` on a cascade: its margin (how close to the threshold a cheap judge's score is sent
to the strong judge), chosen on dev and kept only on held-out evidence.

The cascade is run once over dev and test at its widest candidate margin: every item gets the
cheap judge's samples, and every item any narrower margin would send on gets the strong
judge's score too (what is sent on only grows with the margin). Each candidate margin is then
worked out from those stored judgements without another call: its scores, its metric on dev,
the share of items it sends to the strong judge. The best on dev (the narrowest, among equals:
the cheapest) is measured once on test against the current margin, paired by item; it is
kept only when the bootstrap interval of the improvement lies above 0 (below, for MAE), and
then written as a variant catalog: the same cascade with that margin.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ...errors import ConfigError
from ...scoring import Cascade
from ...scoring.pass_line import PassLine
from ..measures.stats import Labelled, compare_labelled, human_flags
from .decision import accepted_on_test, shown
from .results import AlignResult, Trial
from .session import Session, improves, metric_of
from .split import LabelledItem, Split

#: The margins tried, as shares of the scorer's scale.
CANDIDATE_MARGINS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)


@dataclass(frozen=True)
class Judged:
    """One item judged by the cascade at its widest margin."""

    cheap: tuple[float, ...]  # the cheap judge's samples; empty when its answer failed
    strong: float | None  # the strong judge's score, when the item was sent on
    expected: bool | float


def unsure(judged: Judged, margin: float, line: PassLine) -> bool:
    """Whether the cascade at `margin` sends the item on (as Cascade.escalation decides)."""
    cheap = judged.cheap
    return not cheap or len({line.passes(score) for score in cheap}) > 1 or any(abs(score - line.value) <= margin for score in cheap)


def cascade_score(judged: Judged, margin: float, line: PassLine) -> float | None:
    """The item's score at `margin`: the cheap judge's, unless it is unsure there."""
    return judged.strong if unsure(judged, margin, line) else judged.cheap[0]


async def tune_margin(session: Session, cascade: Cascade, split: Split, result: AlignResult, output_dir: str | Path | None) -> AlignResult:
    scale = cascade.pass_line.scale
    candidates = sorted({round(share * scale, 6) for share in CANDIDATE_MARGINS} | {cascade.margin})
    widest = cascade.with_margin(candidates[-1])
    judged = await _judged(session, widest, [*split.dev, *split.test])
    line = cascade.line
    flag_line = result.baseline_threshold

    def labelled(items: Sequence[LabelledItem], margin: float) -> list[Labelled]:
        scored = []
        for item in items:
            found = judged.get(item.id)
            score = cascade_score(found, margin, line) if found is not None else None
            if found is not None and score is not None:
                scored.append(Labelled(item.id, None, score, found.expected))
        return scored

    def sent_on(items: Sequence[LabelledItem], margin: float) -> float:
        found = [judged[item.id] for item in items if item.id in judged]
        return sum(unsure(item, margin, line) for item in found) / max(len(found), 1)

    result.baseline_dev = metric_of(labelled(split.dev, cascade.margin), flag_line, session.direction, session.metric)
    best, best_dev = cascade.margin, result.baseline_dev
    for margin in candidates:
        dev = metric_of(labelled(split.dev, margin), flag_line, session.direction, session.metric)
        kept = improves(dev, best_dev, session.metric)
        change = f"margin {margin:g} (sends {sent_on(split.dev, margin):.0%} of dev items to {cascade.strong.judge.model})"
        result.trials.append(Trial(name=f"margin-{margin:g}", kind="margin", change=change, dev=dev, best_before=best_dev, kept=kept, run=session.runs[-1]))
        session.say(f"trial margin {margin:g}: {session.metric} on dev {'-' if dev is None else f'{dev:.4f}'}: {'kept' if kept else 'dropped'}")
        if kept:
            best, best_dev = margin, dev
    if best == cascade.margin:
        result.verdict = f"No margin beat the current one ({cascade.margin:g}) on dev ({session.metric} {shown(result.baseline_dev)}): nothing was changed."
        return result
    result.chosen = [f"cascade margin {cascade.margin:g} -> {best:g} (sends {sent_on(split.test, best):.0%} of test items on, against {sent_on(split.test, cascade.margin):.0%})"]
    result.test = compare_labelled(
        labelled(split.test, cascade.margin), labelled(split.test, best), names=(cascade.id, f"{cascade.id}@margin-{best:g}"),
        thresholds=(flag_line, flag_line), direction=session.direction,
    )
    folder = accepted_on_test(result, "margin", f"{best:g}", output_dir)
    if folder is not None:
        _write(cascade, best, result, folder)
    return result


async def _judged(session: Session, cascade: Cascade, items: Sequence[LabelledItem]) -> dict[str, Judged]:
    """Every item's judgements by `cascade`, by item id (items it could not score left out)."""
    evaluated = await session.evaluate([item.raw for item in items], cascade, f"cascade-{cascade.fingerprint[:10]}", "the cascade at its widest margin")
    expected = {item.id: item.expected for item in items}
    judged: dict[str, Judged] = {}
    for item in evaluated.items:
        outcome = item.results.get(cascade.id)
        if item.id is None or outcome is None or not outcome.ok or outcome.judges is None:
            continue
        label = expected[item.id]
        if session.metric != "mae":
            label = human_flags(label, session.human_threshold, session.direction)
        cheap = tuple(judge.score for judge in outcome.judges if judge.escalation is None)
        strong = next((judge.score for judge in outcome.judges if judge.escalation is not None), None)
        judged[item.id] = Judged(cheap=cheap, strong=strong, expected=label)
    return judged


def _write(cascade: Cascade, margin: float, result: AlignResult, folder: Path) -> None:
    """The variant catalog: the same scorer, its cascade with the new margin."""
    if folder.exists() and any(folder.iterdir()):
        raise ConfigError(f"{folder} is not empty: the aligned variant goes in a folder of its own (-o another folder)")
    folder.mkdir(parents=True, exist_ok=True)
    threshold = f"\n      threshold: {cascade.threshold:g}" if cascade.threshold is not None else ""
    (folder / "scorers.yaml").write_text(
        f"# Written by `scorers align` on {datetime.date.today().isoformat()}: {result.verdict}\n"
        f"# Compare it with the original: scorers compare DATA --scorer {result.scorer_id} --config {folder}\n"
        f"scorers:\n  {result.scorer_id}:\n    extends: {result.scorer_id}\n    judge:\n      model: {cascade.cheap.judge.model}\n"
        f"    cascade:\n      escalate_to: {cascade.strong.judge.model}\n      margin: {margin:g}\n      samples: {cascade.samples}{threshold}\n",
        encoding="utf-8",
    )
    (folder / "align.json").write_text(result.model_dump_json(indent=2), encoding="utf-8")

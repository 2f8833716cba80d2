"""`align` on a cascade: its margin (how close to the threshold a cheap judge's score is sent
to the strong judge) and, where the cheap judge gives log-probabilities, its least confidence
(`min_confidence`: below it an item is sent on), chosen on dev and kept only on held-out
evidence.

The cascade is run once over dev and test at its widest candidate margin and the highest
bound: every item gets the cheap judge's samples, and every item any narrower margin or lower
bound would send on gets the strong judge's score too (what is sent on only grows with
either). Each candidate (margin, bound) is then worked out from those stored judgements
without another call: its scores, its metric on dev, the share of items it sends to the
strong judge. The best on dev (the narrowest margin, then the lowest bound, among equals: the
cheapest) is measured once on test against the current setting, paired by item; it is kept
only when the bootstrap interval of the improvement lies above 0 (below, for MAE), and then
written as a variant catalog: the same cascade with that margin and bound.
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
from ..measures.confidence import confidence_of
from .decision import accepted_on_test, shown
from .results import AlignResult, Trial
from .session import Session, improves, metric_of
from .split import LabelledItem, Split

#: The margins tried, as shares of the scorer's scale.
CANDIDATE_MARGINS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)
#: The least confidences tried (None: none), where the cheap judge gives a confidence.
CANDIDATE_BOUNDS = (None, 0.6, 0.7, 0.8, 0.9, 0.95)
#: A (margin, least confidence) a cascade is tried with.
Setting = tuple[float, "float | None"]


@dataclass(frozen=True)
class Judged:
    """One item judged by the cascade at its widest margin."""

    cheap: tuple[float, ...]  # the cheap judge's samples; empty when its answer failed
    strong: float | None  # the strong judge's score, when the item was sent on
    expected: bool | float
    confidence: float | None = None  # the cheap judge's least confidence over its samples


def unsure(judged: Judged, setting: Setting, line: PassLine) -> bool:
    """Whether the cascade at `setting` (margin, least confidence) sends the item on (as
    Cascade.escalation decides)."""
    cheap, (margin, bound) = judged.cheap, setting
    if not cheap or len({line.passes(score) for score in cheap}) > 1 or any(abs(score - line.value) <= margin for score in cheap):
        return True
    return bound is not None and judged.confidence is not None and judged.confidence < bound


def cascade_score(judged: Judged, setting: Setting, line: PassLine) -> float | None:
    """The item's score at `setting`: the cheap judge's, unless it is unsure there."""
    return judged.strong if unsure(judged, setting, line) else judged.cheap[0]


def described(setting: Setting) -> str:
    margin, bound = setting
    return f"margin {margin:g}" + (f", min_confidence {bound:g}" if bound is not None else "")


async def tune_margin(session: Session, cascade: Cascade, split: Split, result: AlignResult, output_dir: str | Path | None) -> AlignResult:
    scale = cascade.pass_line.scale
    margins = sorted({round(share * scale, 6) for share in CANDIDATE_MARGINS} | {cascade.margin})
    widest = cascade.with_margin(margins[-1]).with_min_confidence(1.0)
    judged = await _judged(session, widest, [*split.dev, *split.test])
    # Bounds are tried only where the cheap judge gives a confidence short of certain: elsewhere none sends anything on.
    unsure_somewhere = any(found.confidence is not None and found.confidence < 1 for found in judged.values())
    bounds = sorted({*(CANDIDATE_BOUNDS if unsure_somewhere else ()), cascade.min_confidence}, key=lambda bound: -1.0 if bound is None else bound)
    current: Setting = (cascade.margin, cascade.min_confidence)
    candidates: list[Setting] = [(margin, bound) for margin in margins for bound in bounds]
    line = cascade.line
    flag_line = result.baseline_threshold

    def labelled(items: Sequence[LabelledItem], setting: Setting) -> list[Labelled]:
        scored = []
        for item in items:
            found = judged.get(item.id)
            score = cascade_score(found, setting, line) if found is not None else None
            if found is not None and score is not None:
                scored.append(Labelled(item.id, None, score, found.expected))
        return scored

    def sent_on(items: Sequence[LabelledItem], setting: Setting) -> float:
        found = [judged[item.id] for item in items if item.id in judged]
        return sum(unsure(item, setting, line) for item in found) / max(len(found), 1)

    result.baseline_dev = metric_of(labelled(split.dev, current), flag_line, session.direction, session.metric)
    best, best_dev = current, result.baseline_dev
    for setting in candidates:
        dev = metric_of(labelled(split.dev, setting), flag_line, session.direction, session.metric)
        kept = improves(dev, best_dev, session.metric)
        change = f"{described(setting)} (sends {sent_on(split.dev, setting):.0%} of dev items to {cascade.strong.judge.model})"
        name = f"margin-{setting[0]:g}" + (f"-min-confidence-{setting[1]:g}" if setting[1] is not None else "")
        result.trials.append(Trial(name=name, kind="margin", change=change, dev=dev, best_before=best_dev, kept=kept, run=session.runs[-1]))
        session.say(f"trial {described(setting)}: {session.metric} on dev {'-' if dev is None else f'{dev:.4f}'}: {'kept' if kept else 'dropped'}")
        if kept:
            best, best_dev = setting, dev
    if best == current:
        result.verdict = f"No margin beat the current one ({described(current)}) on dev ({session.metric} {shown(result.baseline_dev)}): nothing was changed."
        return result
    change = f"margin {current[0]:g} -> {best[0]:g}" if current[1] is None and best[1] is None else f"{described(current)} -> {described(best)}"
    result.chosen = [f"cascade {change} (sends {sent_on(split.test, best):.0%} of test items on, against {sent_on(split.test, current):.0%})"]
    result.test = compare_labelled(
        labelled(split.test, current), labelled(split.test, best), names=(cascade.id, f"{cascade.id}@{described(best).replace(', ', '-').replace(' ', '-')}"),
        thresholds=(flag_line, flag_line), direction=session.direction,
    )
    folder = accepted_on_test(result, "margin", described(best), output_dir)
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
        cheap_judges = [judge for judge in outcome.judges if judge.escalation is None]
        confidences = [confidence for judge in cheap_judges if (confidence := confidence_of(judge.steps)) is not None]
        strong = next((judge.score for judge in outcome.judges if judge.escalation is not None), None)
        judged[item.id] = Judged(cheap=tuple(judge.score for judge in cheap_judges), strong=strong, expected=label, confidence=min(confidences, default=None))
    return judged


def _write(cascade: Cascade, setting: Setting, result: AlignResult, folder: Path) -> None:
    """The variant catalog: the same scorer, its cascade with the new margin and least confidence."""
    if folder.exists() and any(folder.iterdir()):
        raise ConfigError(f"{folder} is not empty: the aligned variant goes in a folder of its own (-o another folder)")
    folder.mkdir(parents=True, exist_ok=True)
    margin, bound = setting
    threshold = f"\n      threshold: {cascade.threshold:g}" if cascade.threshold is not None else ""
    threshold += f"\n      min_confidence: {bound:g}" if bound is not None else ""
    (folder / "scorers.yaml").write_text(
        f"# Written by `scorers align` on {datetime.date.today().isoformat()}: {result.verdict}\n"
        f"# Compare it with the original: scorers compare DATA --scorer {result.scorer_id} --config {folder}\n"
        f"scorers:\n  {result.scorer_id}:\n    extends: {result.scorer_id}\n    judge:\n      model: {cascade.cheap.judge.model}\n"
        f"    cascade:\n      escalate_to: {cascade.strong.judge.model}\n      margin: {margin:g}\n      samples: {cascade.samples}{threshold}\n",
        encoding="utf-8",
    )
    (folder / "align.json").write_text(result.model_dump_json(indent=2), encoding="utf-8")

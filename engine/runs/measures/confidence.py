"""The judge's confidence as every surface shows it, and how well it is calibrated against
people.

An item's confidence is the chance that its pass/fail would be the same were the judge asked
again, worked out from its verdicts' probabilities when it was scored (scoring/confidence.py)
and kept on its score step's record; `confidence_of` reads it, for the command line, the
report and the workbench alike. Against human labels, the confidence of each item is set
beside whether the judge's pass/fail agreed with people's: the expected calibration error
(ECE, over CALIBRATION_BINS equal-width bins), the area under the ROC curve of confidence
separating agreed verdicts from the others, each with a bootstrap interval (agreement.py
resamples them), and the reliability curve (per bin, mean confidence against the share agreed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ...scoring import StepRecord
from ..results import ReliabilityBin

#: Equal-width bins of confidence for the calibration error and the reliability curve.
CALIBRATION_BINS = 10


def confidence_of(steps: Mapping[str, StepRecord]) -> float | None:
    """The item's confidence (None: its judge gave no probabilities)."""
    for record in steps.values():
        if record.kind == "score":
            return record.confidence
    return None


def shown(confidence: float | None) -> str:
    """A confidence as every surface writes it: a percentage, or a dash."""
    return "-" if confidence is None else f"{confidence:.0%}"


def sure_shown(steps: Mapping[str, StepRecord]) -> str:
    """An item's confidence as every surface writes it, with its calibrated value beside it
    where the scorer carried a kept map: "60% sure", "60% sure, 5% calibrated", or a dash."""
    record = next((record for record in steps.values() if record.kind == "score"), None)
    if record is None or record.confidence is None:
        return shown(None)
    calibrated = "" if record.calibrated_confidence is None else f", {shown(record.calibrated_confidence)} calibrated"
    return f"{shown(record.confidence)} sure{calibrated}"


def _bin(confidence: float, bins: int) -> int:
    return min(int(confidence * bins), bins - 1)


def calibration_error(pairs: Sequence[tuple[float, bool]], bins: int = CALIBRATION_BINS) -> float | None:
    """The expected calibration error of (confidence, agreed) pairs."""
    return calibration_figures(pairs, bins)(range(len(pairs)))["ece"]


def calibration_figures(pairs: Sequence[tuple[float, bool]], bins: int = CALIBRATION_BINS) -> Callable[[Sequence[int]], dict[str, float | None]]:
    """The figures of any resample of `pairs` (the indices picked, with repeats): the expected
    calibration error, and the AUROC of confidence telling agreed verdicts from the others
    (Mann-Whitney, ties counted half; None when either kind is missing). The pairs are grouped
    by confidence once, so that a resample is counted rather than sorted: a bootstrap draws a
    thousand of them, and sorting each took 1.7 s of CPU for 1,000 labelled items."""
    values = sorted({confidence for confidence, _ in pairs})
    group_of = {value: index for index, value in enumerate(values)}
    codes = [2 * group_of[confidence] + int(bool(agreed)) for confidence, agreed in pairs]
    bin_of = [_bin(value, bins) for value in values]

    def figures(picked: Sequence[int]) -> dict[str, float | None]:
        counts = [0] * (2 * len(values))
        for index in picked:
            counts[codes[index]] += 1
        total = sum(counts)
        if not total:
            return {"ece": None, "auroc": None}
        confidence_in_bin, agreed_in_bin = [0.0] * bins, [0] * bins
        # Walking up the confidences, each agreed verdict beats every other one below it and ties half.
        below = wins = 0.0
        agreed = 0
        for group, value in enumerate(values):
            wrong, right = counts[2 * group], counts[2 * group + 1]
            if not wrong and not right:
                continue
            confidence_in_bin[bin_of[group]] += value * (wrong + right)
            agreed_in_bin[bin_of[group]] += right
            wins += right * (below + wrong / 2)
            below += wrong
            agreed += right
        others = total - agreed
        return {
            "ece": sum(abs(expected - seen) for expected, seen in zip(confidence_in_bin, agreed_in_bin)) / total,
            "auroc": wins / (agreed * others) if agreed and others else None,
        }

    return figures


def reliability(pairs: Sequence[tuple[float, bool]], bins: int = CALIBRATION_BINS) -> list[ReliabilityBin]:
    """Per bin with items: its mean confidence and the share agreed."""
    grouped: dict[int, list[tuple[float, bool]]] = {}
    for pair in pairs:
        grouped.setdefault(_bin(pair[0], bins), []).append(pair)
    return [
        ReliabilityBin(
            low=index / bins, high=(index + 1) / bins, confidence=round(sum(c for c, _ in members) / len(members), 4),
            agreement=round(sum(1 for _, right in members if right) / len(members), 4), items=len(members),
        )
        for index, members in sorted(grouped.items())
    ]

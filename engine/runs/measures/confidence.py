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

import itertools
from collections.abc import Mapping, Sequence

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


def _bin(confidence: float, bins: int) -> int:
    return min(int(confidence * bins), bins - 1)


def calibration_error(pairs: Sequence[tuple[float, bool]], bins: int = CALIBRATION_BINS) -> float | None:
    """The expected calibration error of (confidence, agreed) pairs."""
    if not pairs:
        return None
    sums = [[0.0, 0.0, 0] for _ in range(bins)]
    for confidence, agreed in pairs:
        entry = sums[_bin(confidence, bins)]
        entry[0] += confidence
        entry[1] += agreed
        entry[2] += 1
    return sum(abs(total - right) for total, right, _ in sums) / len(pairs)


def separation(pairs: Sequence[tuple[float, bool]]) -> float | None:
    """The AUROC of confidence telling agreed verdicts from the others (Mann-Whitney, ties
    counted half); None when either kind is missing."""
    agreed = sum(1 for _, right in pairs if right)
    others = len(pairs) - agreed
    if not agreed or not others:
        return None
    # Walking up the confidences, each agreed verdict beats every other one below it and ties half.
    below = wins = 0.0
    for _, tied in itertools.groupby(sorted(pairs), key=lambda pair: pair[0]):
        group = list(tied)
        right = sum(1 for _, agreed_here in group if agreed_here)
        wrong = len(group) - right
        wins += right * (below + wrong / 2)
        below += wrong
    return wins / (agreed * others)


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

"""A monotone map from the judge's confidence to the chance that people agree with its
pass/fail, fitted on labelled items (`scorers calibrate --fit-confidence`) and kept only when
it helps beyond noise.

The labelled items are split in two at random (a fixed seed): an isotonic regression
(scikit-learn's, the `calibration` extra) is fitted on the dev half, from each item's
confidence to whether the judge agreed with people; on the untouched test half, the
calibration error of the confidence as it is and as mapped is measured on the same items,
and the map is kept only when the gain's 95% interval (a paired bootstrap) lies above 0, the
rule align keeps a change by (align/decision.py). A kept map is written beside the scorer's
fingerprint (its version: definition, templates, schemas, options and judge), for that version
only.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from ..errors import ConfigError
from .align.decision import beyond_noise
from ..catalog.confidence_maps import map_file
from ..scoring import AnyScorer
from ..scoring.confidence import ConfidenceMap
from .measures.agreement import SEED, Labelled, bootstrap, read_label
from .measures.confidence import calibration_error, confidence_of
from .results import FigureEstimate

#: The fewest labelled items with a confidence worth fitting a map on (half of them held out).
LEAST_ITEMS = 20


class ConfidenceFit(BaseModel):
    """What fitting a map found, and whether it is kept."""

    dev_items: int
    test_items: int
    error_before: float | None = Field(description="Calibration error on the test items, confidence as it is")
    error_after: float | None = Field(description="The same, mapped")
    gain: FigureEstimate = Field(description="before - after on the test items, with its paired bootstrap 95% interval")
    kept: bool
    verdict: str
    map: ConfidenceMap | None = None
    written: str | None = None


def fit_confidence_map(pairs: Sequence[tuple[float, bool]]) -> ConfidenceFit:
    """Fit on half of the (confidence, agreed) pairs, judge it on the other half."""
    if len(pairs) < LEAST_ITEMS:
        raise ConfigError(f"fitting a confidence map needs at least {LEAST_ITEMS} labelled items whose judge gave a confidence; there are {len(pairs)}")
    try:
        from sklearn.isotonic import IsotonicRegression
    except ImportError:
        raise ConfigError("fitting a confidence map needs scikit-learn: pip install 'llm-scorers[calibration]'") from None
    order = list(range(len(pairs)))
    random.Random(SEED).shuffle(order)
    half = len(order) // 2
    dev, test = [pairs[i] for i in order[:half]], [pairs[i] for i in order[half:]]
    fitted = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip").fit(
        [confidence for confidence, _ in dev], [1.0 if agreed else 0.0 for _, agreed in dev]
    )
    mapping = ConfidenceMap(points=[(float(x), float(y)) for x, y in zip(fitted.X_thresholds_, fitted.y_thresholds_)])
    mapped = [(mapping(confidence), agreed) for confidence, agreed in test]

    def gain(picked: list[int]) -> dict[str, float | None]:
        before, after = calibration_error([test[i] for i in picked]), calibration_error([mapped[i] for i in picked])
        return {"gain": None if before is None or after is None else before - after}

    change = bootstrap(len(test), gain)["gain"]
    before, after = calibration_error(test), calibration_error(mapped)
    kept = beyond_noise(change, lower_is_better=False)
    interval = "-" if change.low is None else f"95% interval {change.low:+.3f} to {change.high:+.3f}"
    verdict = (
        f"{'Kept' if kept else 'Not kept'}: on {len(test)} held-out items the map took the calibration error from "
        f"{before:.3f} to {after:.3f} ({interval}){'' if kept else ', not beyond noise'}."
    )
    return ConfidenceFit(
        dev_items=len(dev), test_items=len(test), error_before=before, error_after=after, gain=change, kept=kept, verdict=verdict,
        map=mapping if kept else None,
    )


def confidence_pairs(scorer: AnyScorer, labelled: Sequence[Labelled]) -> list[tuple[float, bool]]:
    """(confidence, the judge's pass/fail agreed with people's) of each labelled item whose
    judge gave a confidence, flagged where the scorer flags (labels read by `read_label`)."""
    line = scorer.pass_line
    pairs = []
    for item in labelled:
        confidence = confidence_of(item.steps)
        human = read_label(item.expected, line.scale, line.direction).flagged
        if confidence is not None and human is not None:
            pairs.append((confidence, line.flags(item.score) == human))
    return pairs


def write_map(fit: ConfidenceFit, folder: Path, scorer_id: str, fingerprint: str) -> Path:
    assert fit.map is not None
    path = map_file(folder, scorer_id, fingerprint)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"scorer_id": scorer_id, "scorer_hash": fingerprint, **fit.map.model_dump(mode="json")}, indent=1), encoding="utf-8")
    return path

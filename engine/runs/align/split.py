"""Labelled items split into train, dev and test: stratified by label, reproducible by seed,
and refused when a split would be too small to say anything."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import ConfigError

#: Shares of train, dev and test.
SHARES = (0.4, 0.3, 0.3)
#: The fewest items of each label dev and test must hold for an interval to mean anything.
MIN_PER_LABEL = 10


@dataclass(frozen=True)
class LabelledItem:
    """A raw item (with a stable `id`) and its label for the scorer being aligned."""

    id: str
    raw: dict[str, Any]
    expected: bool | float


@dataclass(frozen=True)
class Split:
    train: list[LabelledItem]
    dev: list[LabelledItem]
    test: list[LabelledItem]


def _stratum(expected: bool | float) -> str:
    # Numeric labels are grouped by their first decimal: enough strata to keep the spread.
    return str(expected) if isinstance(expected, bool) else f"{round(float(expected), 1):g}"


def split_items(items: Sequence[LabelledItem], seed: int, what: str) -> Split:
    """Each label's items shuffled with `seed` and cut by SHARES. Refused, with the number
    needed, when dev or test would hold fewer than MIN_PER_LABEL items of a label."""
    strata: dict[str, list[LabelledItem]] = {}
    for item in items:
        strata.setdefault(_stratum(item.expected), []).append(item)
    if len(strata) < 2:
        raise ConfigError(f"{what}: every labelled item has the same label ({next(iter(strata), 'none')}); align needs items of both kinds")
    needed = math.ceil(MIN_PER_LABEL / min(SHARES[1:]))
    if any(not isinstance(item.expected, bool) for item in items):
        # Scores as labels: many small strata are fine, the splits as a whole must be big enough.
        if len(items) < 2 * needed:
            raise ConfigError(f"{what}: too few items to align on ({len(items)} labelled); scores as labels need at least {2 * needed}")
        short = {}
    else:
        short = {label: len(group) for label, group in strata.items() if len(group) < needed}
    if short:
        counts = ", ".join(f"{count} labelled {label}" for label, count in sorted(short.items()))
        raise ConfigError(
            f"{what}: too few items to align on ({counts}); each label needs at least {needed} items, so that dev and "
            f"test hold {MIN_PER_LABEL} of it each and the test interval can say something"
        )
    generator = random.Random(seed)
    train: list[LabelledItem] = []
    dev: list[LabelledItem] = []
    test: list[LabelledItem] = []
    for label in sorted(strata):
        group = sorted(strata[label], key=lambda item: item.id)
        generator.shuffle(group)
        cut_train = round(len(group) * SHARES[0])
        cut_dev = cut_train + round(len(group) * SHARES[1])
        train += group[:cut_train]
        dev += group[cut_train:cut_dev]
        test += group[cut_dev:]
    return Split(train=train, dev=dev, test=test)

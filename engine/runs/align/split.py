"""Labelled items split into train, dev and test: stratified by label, related items (one
group, such as a question's right and wrong answers) kept on one side, reproducible by seed,
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


def group_of(item: LabelledItem, group_by: str | None) -> str:
    """The group an item goes with: its `group_by` field (in its metadata, else at its top
    level), or the item alone when it has none."""
    if group_by is None:
        return item.id
    metadata = item.raw.get("metadata")
    value = metadata.get(group_by) if isinstance(metadata, dict) and group_by in metadata else item.raw.get(group_by)
    return item.id if value is None else f"{group_by}={value}"


def default_group(items: Sequence[LabelledItem]) -> str | None:
    """`pair` when items carry `metadata.pair` (one question's right and wrong answers), else none."""
    return "pair" if any(isinstance(item.raw.get("metadata"), dict) and "pair" in item.raw["metadata"] for item in items) else None


def split_items(items: Sequence[LabelledItem], seed: int, what: str, group_by: str | None = None) -> Split:
    """Items shuffled with `seed` and cut by SHARES, each label keeping its share: with
    `group_by`, the items of one group (one `metadata.pair`) go to the same side together,
    groups of the same labels cut as one stratum. Refused, with the number needed, when dev
    or test would hold fewer than MIN_PER_LABEL items of a label."""
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
    groups: dict[str, list[LabelledItem]] = {}
    for item in items:
        groups.setdefault(group_of(item, group_by), []).append(item)
    # Groups made of the same labels form a stratum (a lone item's stratum is its label).
    kinds: dict[str, list[tuple[str, list[LabelledItem]]]] = {}
    for key, members in groups.items():
        kinds.setdefault("+".join(sorted(_stratum(member.expected) for member in members)), []).append((key, members))
    generator = random.Random(seed)
    train: list[LabelledItem] = []
    dev: list[LabelledItem] = []
    test: list[LabelledItem] = []
    for kind in sorted(kinds):
        stratum = sorted(kinds[kind], key=lambda pair: pair[0])
        generator.shuffle(stratum)
        cut_train = round(len(stratum) * SHARES[0])
        cut_dev = cut_train + round(len(stratum) * SHARES[1])
        train += [member for _, members in stratum[:cut_train] for member in members]
        dev += [member for _, members in stratum[cut_train:cut_dev] for member in members]
        test += [member for _, members in stratum[cut_dev:] for member in members]
    return Split(train=train, dev=dev, test=test)

"""Labelled data sets for the workbench: the one given, the examples found beside it, the
items of a file for the preview, and a sample stratified by label for a run."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..runs import EvalItem
from ..runs.items import UnreadableItem, numbered_jsonl

#: Examples shipped in a checkout (not in the wheel), looked for where the workbench runs and
#: beside the package's source.
EXAMPLE_FOLDERS = (Path("examples"), Path(__file__).resolve().parent.parent.parent / "examples")

#: The preview and the sample read at most this many items of a file.
MAX_ITEMS = 20_000


@dataclass(frozen=True)
class DataItem:
    """One item of a data file: its identity (its `id`, else `line-N`), its line, the raw
    mapping (given an `id` when it had none, so runs of different samples pair items)."""

    item_id: str
    line: int
    raw: dict[str, Any]

    def label_for(self, scorer_id: str) -> bool | float | None:
        return EvalItem.of(self.raw).expected_for(scorer_id)


def example_sets(given: Path | None) -> list[dict[str, str]]:
    """The data sets to offer: the given one first, then each example file found."""
    offered: list[Path] = [given] if given is not None else []
    for folder in EXAMPLE_FOLDERS:
        if folder.is_dir():
            offered += sorted(folder.glob("*.jsonl"))
    seen: set[str] = set()
    found = []
    for path in offered:
        if path.name in seen and path != given:  # the same example in the checkout and here: once
            continue
        seen.add(path.name)
        found.append({"path": str(path), "name": path.name})
    return found


def read_items(path: Path) -> list[DataItem]:
    """The readable items of a JSONL data file (an unreadable line is skipped here; a run
    reports it), each with an identity."""
    if not path.is_file():
        raise ConfigError(f"data {path}: no such file")
    if path.suffix.lower() != ".jsonl":
        raise ConfigError(f"data {path}: the workbench reads JSON Lines (.jsonl) files")
    items: list[DataItem] = []
    for line, value in numbered_jsonl(path):
        if isinstance(value, UnreadableItem) or not isinstance(value, dict):
            continue
        item_id = value.get("id")
        raw = value if item_id is not None else {**value, "id": f"line-{line}"}
        items.append(DataItem(str(raw["id"]), line, raw))
        if len(items) >= MAX_ITEMS:
            break
    if not items:
        raise ConfigError(f"data {path}: no readable items")
    return items


def label_name(label: bool | float | None) -> str:
    if label is None:
        return "unlabelled"
    if isinstance(label, bool):
        return "flag" if label else "pass"
    return f"{label:g}"


def stratified_sample(items: Sequence[DataItem], scorer_id: str, size: int, seed: int) -> list[DataItem]:
    """`size` items drawn at random with `seed`, each label (flag / pass, or each number)
    represented in the share it has among the labelled items; kept in the file's order.
    Without labels for this scorer, a plain random sample."""
    if size < 1:
        raise ConfigError(f"sample size must be at least 1, got {size}")
    labelled = [item for item in items if item.label_for(scorer_id) is not None] or list(items)
    if size >= len(labelled):
        return labelled
    groups: dict[str, list[DataItem]] = {}
    for item in labelled:
        groups.setdefault(label_name(item.label_for(scorer_id)), []).append(item)
    # Largest remainder: each label's share of the sample, rounded so the sizes add up.
    exact = {name: size * len(members) / len(labelled) for name, members in groups.items()}
    counts = {name: int(share) for name, share in exact.items()}
    for name in sorted(exact, key=lambda name: (counts[name] - exact[name], name))[: size - sum(counts.values())]:
        counts[name] += 1
    generator = random.Random(seed)
    chosen: list[DataItem] = []
    for name in sorted(groups):
        chosen += generator.sample(groups[name], counts[name])
    return sorted(chosen, key=lambda item: item.line)

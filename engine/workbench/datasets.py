"""Labelled data sets for the workbench: the one given, the examples found in the folder it
was started in (and nothing else is read), the items of a file for the preview, and a sample
stratified by label for a run."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..runs import EvalItem
from ..runs.items import UnreadableItem, numbered_jsonl

#: Where data sets are looked for, under the folder the workbench was started in.
DATA_FOLDERS = (".", "examples")

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


class NotOffered(ConfigError):
    """A data file the workbench does not offer: it reads no other file of the disk."""


class DataSets:
    """The data sets a workbench offers: the one given (`--data`) first, then the `.jsonl`
    files found in the folder it was started in and in its `examples/` folder, each once.
    Items are read from these files only."""

    def __init__(self, given: Path | None, started_in: Path) -> None:
        self.started_in = started_in.resolve()
        candidates: list[Path] = [given] if given is not None else []
        for folder in DATA_FOLDERS:
            place = self.started_in / folder
            if place.is_dir():
                candidates += sorted(place.glob("*.jsonl"))
        self.offered: list[dict[str, str]] = []
        self._paths: dict[Path, Path] = {}
        for path in candidates:
            resolved = path.resolve()
            if resolved in self._paths:  # the file given is also found here: listed once
                continue
            self._paths[resolved] = path
            self.offered.append({"path": str(path), "name": self._shown(path)})

    def _shown(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.started_in).as_posix()
        except ValueError:
            return str(path)

    def path(self, data: str) -> Path:
        """The file of an offered data set; any other path is refused."""
        found = self._paths.get(Path(data).resolve())
        if found is None:
            where = f"{self.offered[0]['path']}, or " if self.offered else ""
            raise NotOffered(f"data {data}: not a data set of this workbench (it reads {where}the .jsonl files in {self.started_in} and its examples/ folder)")
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

"""Resuming a run: what it was started on (refused on other data or other scorers), and which
saved results of an item still hold (the item and the scorer unchanged since)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...scoring import AnyScorer
from ...store import Store
from ..items import Data
from ..records import outcome_of
from ..results import ScorerOutcome


def started_with(data: Data, meta: Mapping[str, Any] | None, scorers: list[AnyScorer]) -> dict[str, Any]:
    """What a run is started on, to refuse resuming it on something else: the data file (or
    the `data` a host names in `meta`) and each scorer's fingerprint."""
    source = str(Path(data).resolve()) if isinstance(data, (str, Path)) else (meta or {}).get("data")
    return {"data": source, "scorers": {scorer.id: scorer.fingerprint for scorer in scorers}}


def resume_differences(before: Mapping[str, Any] | None, now: Mapping[str, Any], scorers: list[AnyScorer]) -> list[str]:
    """What keeps a run from being resumed on `now`: other data, or other scorers or judges
    (its means would describe neither)."""
    if not before:
        return []  # a run stored before runs remembered this: its records' fingerprints decide
    differences: list[str] = []
    if before.get("data") and now.get("data") and before["data"] != now["data"]:
        differences.append(f"it was started on {before['data']}, not {now['data']}")
    old, new = dict(before.get("scorers") or {}), dict(now["scorers"])
    if set(old) != set(new):
        differences.append(f"it was started with scorers {', '.join(sorted(old)) or 'none'}, not {', '.join(sorted(new))}")
    else:
        changed = [scorer.id for scorer in scorers if old[scorer.id] != new[scorer.id]]
        if changed:
            differences.append(
                f"{', '.join(changed)} changed since (another definition or judge: its YAML, templates, schemas, options, "
                "model, mode or sampling)"
            )
    return differences


async def saved_outcomes(
    store: Store, run: str, key: str, fingerprint: str, scorers: list[AnyScorer]
) -> tuple[dict[str, ScorerOutcome], Any]:
    """The item's saved results that still hold (same item content, same scorer and judge; a
    saved error is judged again), and the reply the saved scorers judged (None if none)."""
    outcomes: dict[str, ScorerOutcome] = {}
    stored_output: Any = None
    wanted = {scorer.id: scorer.fingerprint for scorer in scorers}
    for record in await asyncio.to_thread(store.item_records, run, key):
        if record.item_hash != fingerprint:
            continue  # the item changed since: judged again, its record replaced
        if record.outcome != "error" and wanted.get(record.scorer_id) == record.scorer_hash:
            outcomes[record.scorer_id] = outcome_of(record, resumed=True)
        if record.output is not None and record.error_stage not in ("target", "item"):
            stored_output = record.output
    return outcomes, stored_output

"""The optimizer that proposes instruction edits. It is a scorer like the others, a catalog of
its own in `optimizer/` beside the built-in catalog (its prompt `prompts/instructions.j2`,
its answer `schemas/instruction_rewrite.yaml`), so its own prompt is tuned the same way; it
runs as a one-item batch run, stored and cached like every judge call of align."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from functools import cache
from typing import Any

from ...catalog import Catalog, builtin_catalog
from ...catalog.source import CatalogSource, builtin_catalog_path
from ...judge.settings import JudgeSettings
from ...scoring import AnyScorer
from ..measures.stats import Labelled

OPTIMIZER_ID = "instruction-optimizer"
#: The most disagreements shown to the optimizer at once (worst first).
MAX_DISAGREEMENTS = 12


@cache
def optimizer_catalog() -> Catalog:
    return Catalog(CatalogSource(builtin_catalog_path().parent / "optimizer" / "scorers.yaml", builtin_catalog().source))


def optimizer(model: str | None, judge: JudgeSettings) -> AnyScorer:
    """The optimizer, asking `model` (else the aligned scorer's judge, else the optimizer's
    default), reached as the scorer being aligned is (base URL, mode, timeouts)."""
    return optimizer_catalog().create(OPTIMIZER_ID, judge=judge.alone(model or judge.model))


def optimizer_item(
    *, scorer_name: str, description: str, step_id: str, instructions: str, disagreements: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """The one item the optimizer judges: the instructions as its output, the rest as its
    metadata. Its id carries a hash of all of it, so a stored proposal is reused only for
    the same question."""
    metadata = {"scorer": scorer_name, "description": description, "step": step_id, "disagreements": list(disagreements)}
    digest = hashlib.sha256(json.dumps([instructions, metadata], sort_keys=True, default=str).encode()).hexdigest()[:12]
    return {"id": f"{step_id}-{digest}", "output": instructions, "metadata": metadata}


def disagreement(raw: dict[str, Any], labelled: Labelled, verdict: str) -> dict[str, Any]:
    """One item the judge got wrong, as the optimizer reads it: the item, the judge's answer
    at each of its llm steps, and the verdict people gave."""
    item = {key: raw[key] for key in ("input", "output", "context") if raw.get(key) is not None}
    judged = {step_id: record.result for step_id, record in labelled.steps.items() if record.kind == "llm" and not record.skipped}
    return {"item": item, "judged": judged, "verdict": verdict}

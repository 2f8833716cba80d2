"""What a queue's labels are good for: a golden set (the items whose label is settled or
agreed, as data items with `expected` and the labels' provenance in `metadata`), read
directly by every command that reads labelled data as `queue:NAME`, and the judge's
agreement with people on those items, measured by the same function as `eval`'s."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ...catalog.queues import QueueSpec
from ...errors import ConfigError
from ...formatting import to_json
from ...scoring.pass_line import flags
from ...store import Direction, KeepsLabels, Store
from ..measures.stats import Labelled, agreement_of, bootstrap
from ..results import Agreement, FigureEstimate
from .people import ItemVerdict, PeopleAgreement, QueueLabels, people_agreement, step_entries

#: How a command's data argument names a queue of the results store instead of a file.
QUEUE_PREFIX = "queue:"


def queue_name(data: str | Path) -> str | None:
    """The queue a data argument names (`queue:NAME`), or None for a file."""
    text = str(data)
    return text[len(QUEUE_PREFIX) :] if text.startswith(QUEUE_PREFIX) else None


def read_queue(store: Store, name: str, fields: bool = True, items: bool = True) -> QueueLabels:
    """The queue with its items, labels and settlements (without `fields`, the items without
    their text: what agreement and progress need; without `items`, none: what a reviewer's
    one item needs); a queue the store does not hold is one line naming those it does."""
    if not isinstance(store, KeepsLabels):
        raise ConfigError(f"this results store ({type(store).__name__}) keeps no review queues")
    queue = store.get_queue(name)
    if queue is None:
        known = ", ".join(found.name for found in store.review_queues()[:10]) or "none"
        raise ConfigError(f"no queue named {name!r} in the results store (queues: {known})")
    return QueueLabels(queue, QueueSpec.model_validate(queue.spec), store.review_items(name, fields) if items else [], store.labels(name), store.settlements(name))


def expected_of(labelled: QueueLabels, value: bool | float | str) -> bool | float:
    """A label as `expected` reads it: a verdict or a category as whether it flags the item,
    a number as it is."""
    if isinstance(value, (bool, str)):
        return labelled.flags(value)
    return float(value)


def _provenance(labelled: QueueLabels, verdict: ItemVerdict) -> dict[str, Any]:
    given = [
        {"by": label.reviewer, "at": label.labelled_at.isoformat(), "label": label.value, **({"answers": label.answers} if label.answers else {}),
         **({"note": label.note} if label.note else {})}
        for label in verdict.labels
    ]
    found: dict[str, Any] = {"queue": labelled.queue.name, "source": labelled.queue.source, "state": verdict.state, "label": verdict.value, "labels": given}
    if verdict.answers:
        found["answers"] = verdict.answers
    if verdict.settlement is not None:
        found["settled_by"] = verdict.settlement.settled_by
        found["settled_at"] = verdict.settlement.settled_at.isoformat()
        if verdict.settlement.note:
            found["settled_note"] = verdict.settlement.note
    return found


class GoldenSet(BaseModel):
    items: list[dict[str, Any]] = Field(default_factory=list)
    open: int = Field(default=0, description="Items with fewer labels than the queue asks for")
    disagreed: int = Field(default=0, description="Items people labelled differently and nobody settled")

    def left_out(self) -> str:
        parts = [f"{self.open} still need labels" if self.open else "", f"{self.disagreed} disagreed on and not settled" if self.disagreed else ""]
        return "; ".join(part for part in parts if part)


def golden_set(labelled: QueueLabels) -> GoldenSet:
    """The items whose label is settled or agreed, as data items: their fields, `expected` for
    the queue's scorer, and where the label came from in `metadata.labels`."""
    found = GoldenSet()
    items = {item.item_id: item for item in labelled.items}
    for verdict in labelled.verdicts():
        if verdict.value is None:
            found.open += verdict.state == "open"
            found.disagreed += verdict.state == "disagreed"
            continue
        fields = items[verdict.item_id].fields
        row: dict[str, Any] = {"id": verdict.item_id, "input": fields.get("input")}
        row["output"] = fields["turns"] if "turns" in fields else fields.get("output")
        for name in ("context", "ground_truth"):
            if name in fields:
                row[name] = fields[name]
        row["metadata"] = {**(fields.get("metadata") or {}), "labels": _provenance(labelled, verdict)}
        row["expected"] = {labelled.queue.scorer_id: expected_of(labelled, verdict.value)}
        found.items.append(row)
    return found


def queue_data(store: Store, name: str) -> list[dict[str, Any]]:
    """The queue's golden set as the items a command reads (`queue:NAME`); a queue with no
    settled or agreed label yet is one line saying what it lacks."""
    found = golden_set(read_queue(store, name))
    if not found.items:
        raise ConfigError(f"queue {name!r} has no settled or agreed label yet ({found.left_out() or 'no item'}): label it first (docs/labelling.md)")
    return found.items


def queue_datasets(store: Store) -> list[dict[str, str]]:
    """The queues of `store` with a settled or agreed label, as data sets a page offers."""
    if not isinstance(store, KeepsLabels):
        return []
    offered = []
    for queue in store.review_queues():
        counts = read_queue(store, queue.name, fields=False).progress()
        done = counts["settled"] + counts["agreed"]
        if done:
            offered.append({"path": f"{QUEUE_PREFIX}{queue.name}", "name": f"queue {queue.name} ({done} labelled)"})
    return offered


def write_golden(found: GoldenSet, path: Path) -> None:
    with path.open("w", encoding="utf-8") as out:
        for row in found.items:
            out.write(to_json(row) + "\n")


def judged_labels(labelled: QueueLabels) -> Iterator[Labelled]:
    """The judge's score beside people's label, on every item the judge scored whose label is
    settled or agreed."""
    items = {item.item_id: item for item in labelled.items}
    for verdict in labelled.verdicts():
        judged = items[verdict.item_id].judged
        if verdict.value is None or judged is None or judged.score is None or judged.outcome != "scored":
            continue
        yield Labelled(verdict.item_id, verdict.position, judged.score, expected_of(labelled, verdict.value), judged.reason)


def judge_agreement(labelled: QueueLabels) -> Agreement | None:
    """The judge against people on the queue's settled and agreed labels, by `agreement_of`
    (what `scorers eval` measures against labels)."""
    pairs = list(judged_labels(labelled))
    if not pairs:
        return None
    queue = labelled.queue
    return agreement_of(pairs, queue.threshold, queue.direction, queue.scale)


class Judgement(BaseModel):
    """Whether the judge's verdict on an item agreed with people's label, and since when people's label stands."""

    at: datetime
    queue: str
    item_id: str
    agreed: bool
    note: str


def labelled_judgements(store: Store, scorer: str, source: str = "any", run: str | None = None) -> list[Judgement]:
    """For every item of the queues of `scorer` (made from runs of `source`: live, batch or
    any; of `run` when given) that people settled or agreed on and the judge scored: whether
    the judge's verdict was theirs, oldest label first. What a `human_agreement` monitor watches."""
    if not isinstance(store, KeepsLabels):
        return []
    found: list[Judgement] = []
    for queue in store.review_queues():
        kind = "live" if queue.run_kind == "live" else "batch" if queue.run is not None else None
        if queue.scorer_id != scorer or (run is not None and queue.run != run) or (source != "any" and kind != source):
            continue
        labelled = read_queue(store, queue.name, fields=False)
        items = {item.item_id: item for item in labelled.items}
        for verdict in labelled.verdicts():
            judged = items[verdict.item_id].judged
            if verdict.value is None or judged is None or judged.score is None or judged.outcome != "scored":
                continue
            judge_flags = flags(judged.score, queue.threshold, queue.direction)
            people_flag = labelled.flags(verdict.value)
            at = verdict.settlement.settled_at if verdict.settlement is not None else max(label.labelled_at for label in verdict.labels)
            note = f"judge {judged.score:g} ({'flag' if judge_flags else 'pass'}), people {'flag' if people_flag else 'pass'}"
            found.append(Judgement(at=at, queue=queue.name, item_id=verdict.item_id, agreed=judge_flags == people_flag, note=note))
    return sorted(found, key=lambda judgement: judgement.at)


class WrongAnswer(BaseModel):
    """One answer of a judge step (a claim's verdict) that people answered otherwise."""

    item_id: str
    position: int = Field(description="Which answer of the item, from 1")
    text: str
    judge: Any
    people: str


class AnswersAgreement(BaseModel):
    """The judge's answers (each claim's verdict) against the ones people settled or agreed on."""

    step: str
    compared: int
    estimate: FigureEstimate = Field(description="The share of those answers on which the judge answered as people did")
    wrong: list[WrongAnswer] = Field(default_factory=list)


def answers_agreement(labelled: QueueLabels) -> AnswersAgreement | None:
    """Answer by answer, whether the judge's answer was people's, on every item whose
    per-answer labels are settled or agreed: which claims the judge got wrong."""
    steps = labelled.spec.steps
    if steps is None or steps.judged is None:
        return None
    items = {item.item_id: item for item in labelled.items}
    same: list[float] = []
    wrong: list[WrongAnswer] = []
    for verdict in labelled.verdicts():
        if verdict.value is None or not verdict.answers:
            continue
        entries = step_entries(labelled.spec, items[verdict.item_id])
        for position, (entry, answer) in enumerate(zip(entries, verdict.answers), start=1):
            if answer is None or entry["judged"] is None:
                continue
            agreed = str(entry["judged"]) == answer
            same.append(1.0 if agreed else 0.0)
            if not agreed:
                wrong.append(WrongAnswer(item_id=verdict.item_id, position=position, text=entry["text"], judge=entry["judged"], people=answer))
    if not same:
        return None
    estimate = bootstrap(len(same), lambda picked: {"share": sum(same[index] for index in picked) / len(picked)})["share"]
    return AnswersAgreement(step=steps.answers, compared=len(same), estimate=estimate, wrong=wrong)


class QueueReport(BaseModel):
    """Everything a queue's page and `scorers queue status` show, from one function."""

    name: str
    scorer_id: str
    direction: Direction
    source: str
    picked_by: list[str]
    labels_per_item: int
    people: PeopleAgreement
    judge: Agreement | None
    answers: AnswersAgreement | None = Field(default=None, description="The judge's answers (each claim's verdict) against people's")
    ceiling_note: str


CEILING_NOTE = (
    "A judge cannot be expected to agree with people better than people agree with each other: "
    "read the judge's figures against the people's own."
)


def queue_report(store: Store, name: str) -> QueueReport:
    labelled = read_queue(store, name, fields=False)
    return QueueReport(
        name=name, scorer_id=labelled.queue.scorer_id, direction=labelled.queue.direction, source=labelled.queue.source, picked_by=labelled.queue.picked_by,
        labels_per_item=labelled.spec.labels_per_item, people=people_agreement(labelled), judge=judge_agreement(labelled),
        answers=answers_agreement(labelled), ceiling_note=CEILING_NOTE,
    )

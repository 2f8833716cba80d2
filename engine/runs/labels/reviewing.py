"""What a reviewer does with a queue, whatever the page or command they use: take the next
item (held for them under a lease), see it as the queue shows it (the judge's view hidden
until they label it when the queue is blind, the judge's claims found in the output), give
a label (checked against the queue's schema), go back to an earlier one, and settle an item
people disagree on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rapidfuzz import fuzz

from ...catalog.queues import FIELDS, QueueSpec
from ...errors import ConfigError
from ...scoring.pass_line import flags
from ...store import HumanLabel, KeepsLabels, ReviewItem, Settlement, Store
from .golden import read_queue
from .people import LabelValue, QueueLabels, step_entries

#: How alike a claim and a passage of the output must be (0-100) to highlight a claim the
#: judge reworded.
CLOSE_ENOUGH = 85.0
LONGEST_NAME = 80
LONGEST_NOTE = 4000


def _store(store: Store) -> KeepsLabels:
    if not isinstance(store, KeepsLabels):
        raise ConfigError(f"this results store ({type(store).__name__}) keeps no review queues")
    return store


def reviewer_name(name: Any) -> str:
    """A reviewer's name as given at the start: any words, not empty, not too long."""
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("reviewer: give your name (it is kept beside each label you give)")
    cleaned = " ".join(name.split())
    if len(cleaned) > LONGEST_NAME:
        raise ConfigError(f"reviewer: a name of at most {LONGEST_NAME} characters")
    return cleaned


def read_value(spec: QueueSpec, scale: float, value: Any) -> LabelValue:
    """A label as given (`flag`/`pass` or true/false, a category, a number) checked against the
    queue's schema; a label the queue does not ask for is one line saying what it asks."""
    kind = spec.label.kind
    if kind == "verdict":
        if value in ("flag", True):
            return True
        if value in ("pass", False):
            return False
        raise ConfigError(f"label: this queue asks for pass or flag, got {value!r}")
    if kind == "category":
        if value not in (spec.label.categories or []):
            raise ConfigError(f"label: this queue asks for one of {', '.join(spec.label.categories or [])}, got {value!r}")
        return str(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"label: this queue asks for a number from 0 to {scale:g}, got {value!r}") from None
    if isinstance(value, bool) or not 0 <= number <= scale:
        raise ConfigError(f"label: this queue asks for a number from 0 to {scale:g}, got {value!r}")
    return number


def read_answers(spec: QueueSpec, item: ReviewItem, answers: Any) -> list[str | None]:
    """One answer per entry of the labelled step (None: left blank), each one of the choices."""
    if answers in (None, []):
        return []
    entries = step_entries(spec, item)
    if spec.steps is None or not isinstance(answers, list) or len(answers) != len(entries):
        raise ConfigError(f"answers: this item asks for {len(entries)} answer(s), one per entry of {spec.steps.answers if spec.steps else 'no step'}")
    for answer in answers:
        if answer is not None and answer not in spec.steps.choices:
            raise ConfigError(f"answers: each is one of {', '.join(spec.steps.choices)}, got {answer!r}")
    return list(answers)


def _note(note: Any, spec: QueueSpec) -> str | None:
    if note in (None, ""):
        return None
    if not isinstance(note, str):
        raise ConfigError("note: expected text")
    if not spec.note:
        raise ConfigError("note: this queue takes no note")
    return note[:LONGEST_NOTE]


def highlights(text: str, claims: Sequence[str]) -> list[dict[str, Any]]:
    """Where each claim occurs in `text`: [start, end) in characters, with the claim's number.
    A claim written as it is found as is (any case); one the judge reworded is found as the
    closest passage when it is close enough; one found nowhere is left out."""
    spans: list[dict[str, Any]] = []
    lowered = text.lower()
    for number, claim in enumerate(claims):
        wanted = claim.strip().rstrip(".").lower()
        if not wanted:
            continue
        start = lowered.find(wanted)
        if start >= 0:
            spans.append({"claim": number, "start": start, "end": start + len(wanted)})
            continue
        found = fuzz.partial_ratio_alignment(wanted, lowered, score_cutoff=CLOSE_ENOUGH)
        if found is not None:
            spans.append({"claim": number, "start": found.dest_start, "end": found.dest_end})
    spans.sort(key=lambda span: span["start"])
    kept: list[dict[str, Any]] = []
    for span in spans:  # overlapping passages: the first one found is kept
        if not kept or span["start"] >= kept[-1]["end"]:
            kept.append(span)
    return kept


def _highlighted(spec: QueueSpec, item: ReviewItem) -> list[str]:
    if spec.highlight and item.judged is not None:
        step, field = spec.highlight.split(".")
        answer = item.judged.answers.get(step)
        texts = answer.get(field) if isinstance(answer, dict) else None
        if isinstance(texts, list):
            return [str(entry.get("statement", entry.get("text", ""))) if isinstance(entry, dict) else str(entry) for entry in texts]
        return []
    return [entry["text"] for entry in step_entries(spec, item)]


def item_view(labelled: QueueLabels, item: ReviewItem, reviewer: str) -> dict[str, Any]:
    """The item as the review page shows it to `reviewer`: the fields the queue shows that it
    has, the claims found in the output, the reviewer's own label if they gave one, and the
    judge's view only once they did (or at once, in a queue that is not blind)."""
    spec = labelled.spec
    own = next((label for label in labelled.by_item.get(item.item_id, []) if label.reviewer == reviewer), None)
    shown = [name for name in FIELDS if name in spec.show and name in item.fields]
    output = item.fields.get("output")
    entries = step_entries(spec, item)
    reveal = own is not None or not spec.blind
    view: dict[str, Any] = {
        "item_id": item.item_id,
        "position": item.position,
        "fields": {name: item.fields[name] for name in shown},
        "order": shown,
        "highlights": highlights(output, _highlighted(spec, item)) if isinstance(output, str) else [],
        "claims": _highlighted(spec, item),
        "entries": [{"text": entry["text"], **({"judged": entry["judged"]} if reveal else {})} for entry in entries],
        "label": own.model_dump(mode="json") if own is not None else None,
        "revealed": reveal,
        "has_judge": item.judged is not None,
        "judged": item.judged.model_dump(mode="json") if reveal and item.judged is not None else None,
        "others": len([label for label in labelled.by_item.get(item.item_id, []) if label.reviewer != reviewer]),
        # An item of an app's trace (engine/runs/traces): its span tree, shown beside the scores.
        "trace": _trace(item.fields.get("metadata")),
        "scored_span": (item.fields.get("metadata") or {}).get("span_id"),
    }
    if reveal and item.judged is not None and item.judged.score is not None:
        view["judge_flags"] = flags(item.judged.score, labelled.queue.threshold, labelled.queue.direction)
    return view


def _trace(metadata: Any) -> list[Any]:
    found = metadata.get("trace") if isinstance(metadata, dict) else None
    return found if isinstance(found, list) else []


def _item(store: Store, name: str, item_id: str) -> ReviewItem:
    found = _store(store).review_item(name, item_id)
    if found is None:
        raise ConfigError(f"queue {name!r} has no item {item_id!r}")
    return found


def next_item(store: Store, name: str, reviewer: str, passed: Sequence[str] = ()) -> dict[str, Any] | None:
    """The next item for `reviewer` (held for them), as `item_view` shows it; None when the
    queue has nothing left for them."""
    labelled = read_queue(store, name, items=False)
    found = _store(store).claim_review(name, reviewer, labelled.spec.lease_seconds, labelled.spec.labels_per_item, passed)
    return None if found is None else item_view(labelled, found, reviewer)


def open_item(store: Store, name: str, reviewer: str, item_id: str) -> dict[str, Any]:
    """An item the reviewer goes back to (held for them again); refused while another
    reviewer holds it."""
    labelled = read_queue(store, name, items=False)
    item = _item(store, name, item_id)
    holder = _store(store).hold_review(name, item_id, reviewer, labelled.spec.lease_seconds)
    if holder is not None:
        raise ConfigError(f"{holder} is labelling item {item_id} right now; it comes back to you once they are done")
    return item_view(labelled, item, reviewer)


def give_label(store: Store, name: str, reviewer: str, item_id: str, value: Any, answers: Any = None, note: Any = None) -> dict[str, Any]:
    """Keep `reviewer`'s label of the item (checked against the queue's schema) and return the
    item as it shows now: with the judge's view revealed."""
    labelled = read_queue(store, name, items=False)
    item = _item(store, name, item_id)
    keeper = _store(store)
    # Checked before the item is held: a label refused leaves no lease that would turn others away.
    label = HumanLabel(
        queue=name, item_id=item_id, reviewer=reviewer, value=read_value(labelled.spec, labelled.queue.scale, value),
        answers=read_answers(labelled.spec, item, answers), note=_note(note, labelled.spec),
    )
    holder = keeper.hold_review(name, item_id, reviewer, labelled.spec.lease_seconds)
    if holder is not None:
        raise ConfigError(f"{holder} holds item {item_id} right now: your label was not kept")
    keeper.save_label(label)
    return item_view(read_queue(store, name, items=False), item, reviewer)


def settle_item(store: Store, name: str, item_id: str, value: Any, settled_by: str, note: Any = None, answers: Any = None) -> Settlement:
    """Give an item its final label, with who settled it."""
    labelled = read_queue(store, name, items=False)
    item = _item(store, name, item_id)
    settlement = Settlement(
        queue=name, item_id=item_id, value=read_value(labelled.spec, labelled.queue.scale, value), answers=read_answers(labelled.spec, item, answers),
        note=note if isinstance(note, str) and note else None, settled_by=reviewer_name(settled_by),
    )
    _store(store).settle(settlement)
    return settlement

"""What the review page asks of the workbench, one method per route: the queues of the
results store and the runs a queue can be made from, making a queue, the next item for a
reviewer (held for them), going back, a label, a queue's agreement, settling an item. The
work is done by `runs.labels`, which the CLI's `scorers queue` uses too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..catalog import Catalog, builtin_catalog
from ..catalog.queues import QueueSpec, default_queue
from ..errors import ConfigError
from ..runs.labels import (
    QueueLabels,
    give_label,
    next_item,
    open_item,
    queue_from_run,
    queue_report,
    read_queue,
    reviewer_name,
    runs_offered,
    settle_item,
)
from ..store import KeepsLabels, Store


def _text(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{name}: missing")
    return value.strip()


def _names(body: dict[str, Any], name: str) -> list[str]:
    value = body.get(name) or []
    if not isinstance(value, list) or not all(isinstance(entry, str) for entry in value):
        raise ConfigError(f"{name}: expected a list of names")
    return value


class ReviewDesk:
    """The review routes of one workbench: its results store, and its catalog (whose `queues:`
    a new queue of the same name takes)."""

    def __init__(self, store: Store, catalog: Callable[[], Catalog]) -> None:
        self.store = store
        self.catalog = catalog

    def _keeper(self) -> KeepsLabels:
        if not isinstance(self.store, KeepsLabels):
            raise ConfigError(f"this results store ({type(self.store).__name__}) keeps no review queues")
        return self.store

    def _progress(self, name: str, reviewer: str | None = None, labelled: QueueLabels | None = None) -> dict[str, Any]:
        """The queue's progress (`labelled`: the queue as just read, else read now)."""
        labelled = labelled or read_queue(self.store, name, fields=False)
        counts = labelled.progress()
        mine = [label.item_id for label in labelled.labels if label.reviewer == reviewer] if reviewer else []
        return {
            "name": name, "scorer": labelled.queue.scorer_id, "source": labelled.queue.source, "items": len(labelled.items),
            "done": counts["settled"] + counts["agreed"], "disagreed": counts["disagreed"], "labels": len(labelled.labels), "mine": mine,
            "labels_per_item": labelled.spec.labels_per_item, "instructions": labelled.spec.instructions, "blind": labelled.spec.blind,
            "label": labelled.spec.label.model_dump(mode="json"), "note": labelled.spec.note, "scale": labelled.queue.scale,
            "choices": labelled.spec.steps.choices if labelled.spec.steps else [], "picked_by": labelled.queue.picked_by,
        }

    def state(self, body: dict[str, Any]) -> dict[str, Any]:
        """The queues (newest first, with their progress), the runs a queue can be made from,
        and the filters there are."""
        queues = [self._progress(queue.name) for queue in self._keeper().review_queues()]
        runs = [
            {"name": run.name, "kind": run.kind, "scorers": [stats.scorer_id for stats in self.store.summary(run.name)]}
            for run in runs_offered(self.store)
        ]
        try:
            declared = [{"name": queue.name, "scorer": queue.scorer} for queue in self.catalog().queues]
        except ConfigError:
            declared = []
        return {"queues": queues, "runs": [run for run in runs if run["scorers"]], "declared": declared}

    def _spec(self, name: str, scorer: str | None) -> QueueSpec:
        try:
            catalog = self.catalog()
        except ConfigError:
            catalog = builtin_catalog()
        declared = next((queue for queue in catalog.queues if queue.name == name), None)
        if declared is not None:
            return declared
        if scorer is None:
            raise ConfigError("scorer: pick the scorer whose items are labelled")
        return default_queue(name, scorer)

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        """Make a queue from a stored run, as `scorers queue create --from-run` does."""
        name, run = _text(body, "name"), _text(body, "run")
        scorer = body.get("scorer") if isinstance(body.get("scorer"), str) and body.get("scorer") else None
        spec = self._spec(name, scorer)
        if scorer is not None and scorer != spec.scorer:
            raise ConfigError(f"scorer: the catalog declares queue {name!r} for {spec.scorer}")
        per_item = body.get("labels_per_item")
        if per_item not in (None, ""):
            spec = QueueSpec.model_validate({**spec.model_dump(), "labels_per_item": per_item})
        sample = body.get("sample")
        seed = body.get("seed") or 0
        queue_from_run(
            self.store, spec, run, filters=_names(body, "filters"), sample=int(sample) if sample not in (None, "") else None, seed=int(seed),
        )
        return self._progress(name)

    def next(self, body: dict[str, Any]) -> dict[str, Any]:
        """The next item for the reviewer (held for them), with the queue's progress; no item
        when nothing is left for them now, and then how many items others hold that still
        need their label (they come back once let go)."""
        name, reviewer, passed = _text(body, "queue"), reviewer_name(body.get("reviewer")), _names(body, "passed")
        item = next_item(self.store, name, reviewer, passed)
        labelled = read_queue(self.store, name, fields=False)
        answer: dict[str, Any] = {"item": item, "queue": self._progress(name, reviewer, labelled)}
        if item is None:
            answer["held_by_others"] = labelled.still_needing(reviewer, passed)
        return answer

    def open(self, body: dict[str, Any]) -> dict[str, Any]:
        """An item the reviewer goes back to (their earlier label shown, the judge's view too)."""
        name, reviewer = _text(body, "queue"), reviewer_name(body.get("reviewer"))
        return {"item": open_item(self.store, name, reviewer, _text(body, "item_id")), "queue": self._progress(name, reviewer)}

    def label(self, body: dict[str, Any]) -> dict[str, Any]:
        """Keep the reviewer's label; the item comes back with the judge's view revealed."""
        name, reviewer = _text(body, "queue"), reviewer_name(body.get("reviewer"))
        item = give_label(self.store, name, reviewer, _text(body, "item_id"), body.get("value"), body.get("answers"), body.get("note"))
        return {"item": item, "queue": self._progress(name, reviewer)}

    def release(self, body: dict[str, Any]) -> dict[str, Any]:
        """Let go of the item the reviewer holds (they leave, or skip it)."""
        self._keeper().release_review(_text(body, "queue"), reviewer_name(body.get("reviewer")))
        return {}

    def report(self, body: dict[str, Any]) -> dict[str, Any]:
        """People's agreement, their disagreements and the judge against their labels."""
        name = _text(body, "queue")
        found = queue_report(self.store, name).model_dump(mode="json")
        for verdict in found["people"]["disagreements"]:
            item = self._keeper().review_item(name, verdict["item_id"])
            verdict["output"] = item.fields.get("output") if item is not None else None
            verdict["input"] = item.fields.get("input") if item is not None else None
            verdict["context"] = item.fields.get("context") if item is not None else None
        return found

    def settle(self, body: dict[str, Any]) -> dict[str, Any]:
        """Give an item its final label, with who settled it."""
        name = _text(body, "queue")
        settle_item(self.store, name, _text(body, "item_id"), body.get("value"), _text(body, "by"), note=body.get("note"))
        return self.report({"queue": name})


ROUTES: dict[str, Callable[[ReviewDesk, dict[str, Any]], Any]] = {
    "review/state": ReviewDesk.state, "review/create": ReviewDesk.create, "review/next": ReviewDesk.next, "review/open": ReviewDesk.open,
    "review/label": ReviewDesk.label, "review/release": ReviewDesk.release, "review/report": ReviewDesk.report, "review/settle": ReviewDesk.settle,
}

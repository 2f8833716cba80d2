"""Labels people give, kept beside the results: review queues of items taken from stored runs
(or a file), each reviewer's label of an item with who gave it and when, the lease that
keeps an item with one reviewer while it is open, and the final label that settles a
disagreement.

The SQL is the same on SQLite and PostgreSQL (times as seconds since the epoch, JSON as
text), so `SQLLabels` serves both stores; the tables are each store's next migration. What
people write passes through the scrubber before it is stored, as every stored text does."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timezone
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from ..errors import ConfigError
from ..formatting import to_json
from ..scrub import scrubbed
from .base import Direction, Outcome


class JudgedItem(BaseModel):
    """What the judge made of an item when the queue was made (hidden from a blind reviewer
    until the item is labelled)."""

    outcome: Outcome = "scored"
    score: float | None = None
    reason: str | None = None
    error: str | None = Field(default=None, description="Why the scorer failed, or why it could not judge the item")
    answers: dict[str, Any] = Field(default_factory=dict, description="What each judge step answered (claims, verdicts ...)")
    judges: list[dict[str, Any]] | None = Field(default=None, description="A jury's judges: model, score, reason")
    model: str | None = None
    judged_at: datetime | None = None


class ReviewQueue(BaseModel):
    """A queue of items for people to label, for one scorer: how it was made, and what its
    reviewers are asked (`spec`: the queue's declaration, checked when it was made)."""

    name: str
    scorer_id: str
    source: str = Field(description="Where the items came from, as a person reads it: 'run nightly', 'file data.jsonl'")
    run: str | None = Field(default=None, description="The stored run the items came from")
    run_kind: str | None = Field(default=None, description="What made that run: batch, live, rescore ...")
    spec: dict[str, Any] = Field(default_factory=dict, description="Instructions, label schema, labels per item, blind, lease")
    threshold: float = Field(description="Where the judge's score flags an item")
    direction: Direction = "higher_is_better"
    scale: float = 1.0
    picked_by: list[str] = Field(default_factory=list, description="The filters and the sample that chose the items")
    created_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))


class ReviewItem(BaseModel):
    queue: str
    item_id: str
    position: int
    fields: dict[str, Any] = Field(default_factory=dict, description="input, output, context, turns, ground_truth, metadata")
    judged: JudgedItem | None = None


class HumanLabel(BaseModel):
    """One reviewer's label of one item: the verdict (true flags the item), category or
    number the queue asks for, one answer per step answer when it asks for those, a note."""

    queue: str
    item_id: str
    reviewer: str
    value: bool | float | str
    answers: list[str | None] = Field(default_factory=list, description="One label per answer of the labelled step (each claim's verdict)")
    note: str | None = None
    labelled_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))


class Settlement(BaseModel):
    """The final label of an item, given by the person who settled it."""

    queue: str
    item_id: str
    value: bool | float | str
    answers: list[str | None] = Field(default_factory=list)
    note: str | None = None
    settled_by: str
    settled_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))


@runtime_checkable
class KeepsLabels(Protocol):
    """A store that keeps review queues and people's labels (both built-in stores do). Two
    reviewers on one shared store never hold the same item at once: an item is leased to
    one reviewer while it is open, and the lease runs out if they leave."""

    def create_queue(self, queue: ReviewQueue, items: Sequence[ReviewItem]) -> None:
        """Keep a new queue and its items; a queue of that name already kept is refused."""
        ...

    def get_queue(self, name: str) -> ReviewQueue | None: ...

    def review_queues(self) -> list[ReviewQueue]:
        """Every queue, newest first."""
        ...

    def delete_queue(self, name: str) -> None:
        """Forget the queue, its items, labels, leases and settlements."""
        ...

    def review_items(self, name: str, fields: bool = True) -> list[ReviewItem]:
        """The queue's items in their order; without `fields`, only their ids, places and what
        the judge made of them (what agreement is measured on), read without their text."""
        ...

    def review_item(self, name: str, item_id: str) -> ReviewItem | None: ...

    def claim_review(self, name: str, reviewer: str, lease_s: float, needed: int, passed: Sequence[str] = ()) -> ReviewItem | None:
        """The first item that still needs labels (fewer than `needed`), that `reviewer` has
        not labelled, that nobody else holds, and that is not in `passed` (items the reviewer
        skipped); it is held by `reviewer` for `lease_s` seconds. A reviewer already holding
        one gets it again. None when no item is left for them."""
        ...

    def hold_review(self, name: str, item_id: str, reviewer: str, lease_s: float) -> str | None:
        """Hold one item for `reviewer` (going back to an earlier one); the name of the
        reviewer who holds it now instead, or None once it is held."""
        ...

    def release_review(self, name: str, reviewer: str) -> None:
        """Let go of whatever `reviewer` holds in the queue."""
        ...

    def save_label(self, label: HumanLabel) -> None:
        """Keep the label (a reviewer's earlier label of the item is replaced) and let go of the item."""
        ...

    def labels(self, name: str) -> list[HumanLabel]:
        """The queue's labels, oldest first."""
        ...

    def settle(self, settlement: Settlement) -> None:
        """Keep the item's final label (replacing an earlier settlement)."""
        ...

    def settlements(self, name: str) -> list[Settlement]: ...


def _seconds(moment: datetime) -> float:
    return moment.timestamp()


def _moment(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def _text(value: Any) -> str:
    return to_json(value)


def _value(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def label_tables(real: str) -> tuple[str, ...]:
    """The statements of the labels' migration; `real` is the store's type of a float."""
    return (
        f"CREATE TABLE review_queues (name TEXT PRIMARY KEY, scorer_id TEXT NOT NULL, created_at {real} NOT NULL, queue TEXT NOT NULL)",
        "CREATE TABLE review_items (queue TEXT NOT NULL, item_id TEXT NOT NULL, item_position INTEGER NOT NULL, item TEXT NOT NULL, "
        "judged TEXT, PRIMARY KEY (queue, item_id))",
        f"CREATE TABLE review_labels (queue TEXT NOT NULL, item_id TEXT NOT NULL, reviewer TEXT NOT NULL, label TEXT NOT NULL, "
        f"labelled_at {real} NOT NULL, PRIMARY KEY (queue, item_id, reviewer))",
        "CREATE INDEX review_labels_in_order ON review_labels (queue, labelled_at)",
        f"CREATE TABLE review_leases (queue TEXT NOT NULL, item_id TEXT NOT NULL, reviewer TEXT NOT NULL, expires_at {real} NOT NULL, "
        "PRIMARY KEY (queue, item_id))",
        f"CREATE TABLE review_settlements (queue TEXT NOT NULL, item_id TEXT NOT NULL, label TEXT NOT NULL, settled_at {real} NOT NULL, "
        "PRIMARY KEY (queue, item_id))",
    )


LABEL_MIGRATION_TITLE = "review queues: items for people to label, their labels with who and when, reviewers' leases, settled labels"


class SQLLabels:
    """`KeepsLabels` over the tables of `label_tables`, for a store with `_transaction`,
    `_read` and its driver's `placeholder`."""

    placeholder = "?"

    def _transaction(self) -> AbstractContextManager[Any]:
        raise NotImplementedError

    def _read(self, sql: str, parameters: Sequence[Any] = ()) -> Sequence[Any]:
        raise NotImplementedError

    def _sql(self, sql: str) -> str:
        return sql.replace("?", self.placeholder) if self.placeholder != "?" else sql

    def create_queue(self, queue: ReviewQueue, items: Sequence[ReviewItem]) -> None:
        with self._transaction() as db:
            if db.execute(self._sql("SELECT 1 FROM review_queues WHERE name = ?"), (queue.name,)).fetchone() is not None:
                raise ConfigError(f"a queue named {queue.name!r} exists already; give another name (`scorers queue list` shows them)")
            db.execute(
                self._sql("INSERT INTO review_queues (name, scorer_id, created_at, queue) VALUES (?, ?, ?, ?)"),
                (queue.name, queue.scorer_id, _seconds(queue.created_at), queue.model_dump_json()),
            )
            rows = [
                (queue.name, item.item_id, item.position, _text(scrubbed(item.fields)), item.judged.model_dump_json() if item.judged else None)
                for item in items
            ]
            db.cursor().executemany(self._sql("INSERT INTO review_items (queue, item_id, item_position, item, judged) VALUES (?, ?, ?, ?, ?)"), rows)

    def get_queue(self, name: str) -> ReviewQueue | None:
        rows = self._read(self._sql("SELECT queue FROM review_queues WHERE name = ?"), (name,))
        return ReviewQueue.model_validate_json(rows[0]["queue"]) if rows else None

    def review_queues(self) -> list[ReviewQueue]:
        return [ReviewQueue.model_validate_json(row["queue"]) for row in self._read("SELECT queue FROM review_queues ORDER BY created_at DESC, name")]

    def delete_queue(self, name: str) -> None:
        with self._transaction() as db:
            for table in ("review_items", "review_labels", "review_leases", "review_settlements"):
                db.execute(self._sql(f"DELETE FROM {table} WHERE queue = ?"), (name,))
            db.execute(self._sql("DELETE FROM review_queues WHERE name = ?"), (name,))

    @staticmethod
    def _item(queue: str, row: Any) -> ReviewItem:
        judged = JudgedItem.model_validate_json(row["judged"]) if row["judged"] is not None else None
        fields = _value(row["item"]) if "item" in row.keys() else {}
        return ReviewItem(queue=queue, item_id=row["item_id"], position=row["item_position"], fields=fields, judged=judged)

    def review_items(self, name: str, fields: bool = True) -> list[ReviewItem]:
        columns = "item_id, item_position, judged" + (", item" if fields else "")
        rows = self._read(self._sql(f"SELECT {columns} FROM review_items WHERE queue = ? ORDER BY item_position"), (name,))
        return [self._item(name, row) for row in rows]

    def review_item(self, name: str, item_id: str) -> ReviewItem | None:
        rows = self._read(self._sql("SELECT item_id, item_position, judged, item FROM review_items WHERE queue = ? AND item_id = ?"), (name, item_id))
        return self._item(name, rows[0]) if rows else None

    def _take(self, db: Any, name: str, item_id: str, reviewer: str, now: float, lease_s: float) -> bool:
        """Hold the item for `reviewer` unless another reviewer's lease on it is still running:
        one statement, so two reviewers taking it at once cannot both succeed."""
        cursor = db.execute(
            self._sql(
                "INSERT INTO review_leases (queue, item_id, reviewer, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT (queue, item_id) DO UPDATE "
                "SET reviewer = excluded.reviewer, expires_at = excluded.expires_at "
                "WHERE review_leases.expires_at < ? OR review_leases.reviewer = excluded.reviewer"
            ),
            (name, item_id, reviewer, now + lease_s, now),
        )
        return bool(cursor.rowcount == 1)

    def claim_review(self, name: str, reviewer: str, lease_s: float, needed: int, passed: Sequence[str] = ()) -> ReviewItem | None:
        now = time.time()
        open_items = self._sql(
            "SELECT i.item_id, i.item_position, i.judged, i.item FROM review_items AS i "
            "LEFT JOIN review_leases AS l ON l.queue = i.queue AND l.item_id = i.item_id "
            "WHERE i.queue = ? AND (l.reviewer IS NULL OR l.reviewer = ? OR l.expires_at < ?) "
            "AND NOT EXISTS (SELECT 1 FROM review_labels AS own WHERE own.queue = i.queue AND own.item_id = i.item_id AND own.reviewer = ?) "
            "AND NOT EXISTS (SELECT 1 FROM review_settlements AS s WHERE s.queue = i.queue AND s.item_id = i.item_id) "
            "AND (SELECT COUNT(*) FROM review_labels AS g WHERE g.queue = i.queue AND g.item_id = i.item_id) < ? "
            "ORDER BY CASE WHEN l.reviewer = ? AND l.expires_at >= ? THEN 0 ELSE 1 END, i.item_position"
        )
        skipped = set(passed)
        with self._transaction() as db:
            for row in db.execute(open_items, (name, reviewer, now, reviewer, needed, reviewer, now)).fetchall():
                if row["item_id"] in skipped:
                    continue
                if not self._take(db, name, row["item_id"], reviewer, now, lease_s):
                    continue
                # Labelled by others since the list was read? Then it is no longer open.
                count = db.execute(self._sql("SELECT COUNT(*) AS n FROM review_labels WHERE queue = ? AND item_id = ?"), (name, row["item_id"])).fetchone()
                if count["n"] >= needed:
                    db.execute(self._sql("DELETE FROM review_leases WHERE queue = ? AND item_id = ? AND reviewer = ?"), (name, row["item_id"], reviewer))
                    continue
                db.execute(self._sql("DELETE FROM review_leases WHERE queue = ? AND reviewer = ? AND item_id <> ?"), (name, reviewer, row["item_id"]))
                return self._item(name, row)
        return None

    def hold_review(self, name: str, item_id: str, reviewer: str, lease_s: float) -> str | None:
        now = time.time()
        with self._transaction() as db:
            if self._take(db, name, item_id, reviewer, now, lease_s):
                db.execute(self._sql("DELETE FROM review_leases WHERE queue = ? AND reviewer = ? AND item_id <> ?"), (name, reviewer, item_id))
                return None
            holder = db.execute(self._sql("SELECT reviewer FROM review_leases WHERE queue = ? AND item_id = ?"), (name, item_id)).fetchone()
            return str(holder["reviewer"]) if holder is not None else None

    def release_review(self, name: str, reviewer: str) -> None:
        with self._transaction() as db:
            db.execute(self._sql("DELETE FROM review_leases WHERE queue = ? AND reviewer = ?"), (name, reviewer))

    def save_label(self, label: HumanLabel) -> None:
        kept = label.model_copy(update={"note": scrubbed(label.note), "value": scrubbed(label.value), "reviewer": scrubbed(label.reviewer)})
        body = _text({"value": kept.value, "answers": kept.answers, "note": kept.note})
        with self._transaction() as db:
            db.execute(
                self._sql(
                    "INSERT INTO review_labels (queue, item_id, reviewer, label, labelled_at) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT (queue, item_id, reviewer) DO UPDATE SET label = excluded.label, labelled_at = excluded.labelled_at"
                ),
                (kept.queue, kept.item_id, kept.reviewer, body, _seconds(kept.labelled_at)),
            )
            db.execute(self._sql("DELETE FROM review_leases WHERE queue = ? AND item_id = ? AND reviewer = ?"), (kept.queue, kept.item_id, kept.reviewer))

    def labels(self, name: str) -> list[HumanLabel]:
        rows = self._read(self._sql("SELECT item_id, reviewer, label, labelled_at FROM review_labels WHERE queue = ? ORDER BY labelled_at, item_id, reviewer"), (name,))
        return [
            HumanLabel(queue=name, item_id=row["item_id"], reviewer=row["reviewer"], labelled_at=_moment(row["labelled_at"]), **_value(row["label"]))
            for row in rows
        ]

    def settle(self, settlement: Settlement) -> None:
        kept = settlement.model_copy(
            update={"note": scrubbed(settlement.note), "value": scrubbed(settlement.value), "settled_by": scrubbed(settlement.settled_by)}
        )
        body = _text({"value": kept.value, "answers": kept.answers, "note": kept.note, "settled_by": kept.settled_by})
        with self._transaction() as db:
            db.execute(
                self._sql(
                    "INSERT INTO review_settlements (queue, item_id, label, settled_at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (queue, item_id) DO UPDATE SET label = excluded.label, settled_at = excluded.settled_at"
                ),
                (kept.queue, kept.item_id, body, _seconds(kept.settled_at)),
            )

    def settlements(self, name: str) -> list[Settlement]:
        rows = self._read(self._sql("SELECT item_id, label, settled_at FROM review_settlements WHERE queue = ? ORDER BY settled_at, item_id"), (name,))
        return [Settlement(queue=name, item_id=row["item_id"], settled_at=_moment(row["settled_at"]), **_value(row["label"])) for row in rows]

"""What a live scorer keeps of a reply beside its scores, so that it can be re-scored later
(`scorers rescore`): the item's fields chosen, each cut at a size limit, secrets masked, and
cleared once the retention period has passed (the scores stay). Secrets are masked in every
stored record, live or batch (`ResultRecord.scrubbed`). A field that was cut or not
kept is noted on the record (`content_note`), so re-scoring never judges half a reply as
if it were whole."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ...errors import ConfigError
from ...formatting import to_json
from ...store import CONTENT_FIELDS, ContentNote, ResultRecord
from ...catalog.monitors import parse_duration

class ContentPolicy(BaseModel):
    """What of each live reply the store keeps beside its scores (for re-scoring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fields: tuple[str, ...] = Field(default=CONTENT_FIELDS, description="The item fields kept (the others are not stored)")
    max_chars: int = Field(default=20_000, ge=0, description="Per field, as JSON text: a longer text is cut, a longer structure is not kept")
    retention: str | None = Field(default=None, description="How long the fields are kept (e.g. 30d); the scores stay after")

    @field_validator("fields")
    @classmethod
    def _known(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(value) - set(CONTENT_FIELDS))
        if unknown:
            raise ValueError(f"unknown field(s) {', '.join(unknown)}; the fields are {', '.join(CONTENT_FIELDS)}")
        return value

    @field_validator("retention")
    @classmethod
    def _span(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                parse_duration(value, "retention")
            except ConfigError as exc:
                raise ValueError(str(exc)) from None
        return value

    @property
    def kept_for(self) -> timedelta | None:
        return parse_duration(self.retention, "retention") if self.retention is not None else None

    @classmethod
    def of(cls, value: ContentPolicy | bool | Mapping[str, Any]) -> ContentPolicy:
        """From what a caller passes: True (the defaults), False (keep no field), options, or a policy."""
        if isinstance(value, ContentPolicy):
            return value
        if isinstance(value, bool):
            return cls() if value else cls(fields=())
        if isinstance(value, Mapping):
            try:
                return cls(**value)
            except ValidationError as exc:
                problem = exc.errors()[0]
                where = ".".join(str(part) for part in problem["loc"])
                raise ConfigError(f"store_content {where}: {problem['msg'].removeprefix('Value error, ')}") from None
        raise ConfigError(f"store_content must be True, False, a mapping of options or a ContentPolicy, got {type(value).__name__}")


def _limited(value: Any, max_chars: int) -> tuple[Any, ContentNote | None]:
    if value is None or len(to_json(value)) <= max_chars:
        return value, None
    if isinstance(value, str):
        return value[:max_chars], "truncated"
    return None, "omitted"


def kept_content(record: ResultRecord, policy: ContentPolicy) -> ResultRecord:
    """The record as the store should keep it under `policy` (its secrets already masked,
    as every stored record's are: `ResultRecord.scrubbed`)."""
    changes: dict[str, Any] = {}
    notes: dict[str, ContentNote] = {}
    for field in CONTENT_FIELDS:
        value = getattr(record, field)
        if field not in policy.fields:
            changes[field] = {} if field == "metadata" else None
            if value not in (None, {}, []):
                notes[field] = "omitted"
            continue
        limited, note = _limited(value, policy.max_chars)
        changes[field] = {} if field == "metadata" and limited is None else limited
        if note is not None:
            notes[field] = note
    changes["content_note"] = notes or None
    return record.model_copy(update=changes)

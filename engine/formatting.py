"""Small helpers every layer uses to turn values and failures into text: one way to dump
JSON, one way to say an exception or a validation error in one line."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from .scrub import scrub


def plain(value: Any) -> Any:
    """Pydantic models to dicts, recursively, so expressions and JSON see plain data."""
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def to_json(value: Any, **options: Any) -> str:
    """JSON that keeps non-ASCII text readable; objects it does not know become their text.
    The text `plain(value)` would give, without copying every dict and list first: only
    what JSON has no form for goes through `_jsonable`."""
    if not options:  # the encoder json.dumps would make for these settings, made once
        return _ENCODER.encode(value)
    return json.dumps(value, ensure_ascii=False, default=_jsonable, **options)


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, Mapping):
        return dict(value)
    return str(value)


_ENCODER = json.JSONEncoder(ensure_ascii=False, default=_jsonable)


def first_line(text: str, limit: int = 300) -> str:
    return (text.strip().splitlines() or [""])[0][:limit]


def one_line(exc: BaseException) -> str:
    """`Kind: first line of the message` for an unexpected exception, secrets masked."""
    message = first_line(scrub(str(exc)), limit=1000)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def validation_line(exc: ValidationError, subject: str = "item") -> str:
    """The first problem of a validation error as `field.path: message`."""
    first = exc.errors()[0]
    return f"{'.'.join(map(str, first['loc'])) or subject}: {first['msg']}"


def refusals(exc: ValidationError) -> str:
    """Every reason a judge's answer was refused, one line each (what the judge is told when
    it is asked again): `field: reason`, a broken rule's message as the author wrote it."""
    lines = []
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"])
        detail = error["msg"].removeprefix("Value error, ")
        lines.append(f"{field}: {detail}" if field else detail)
    return "\n".join(lines)


def refusal(exc: ValidationError) -> str:
    """Why a judge's answer was refused, in one line: the field at fault (if any) and the
    reason, a broken rule's message as the author wrote it."""
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"])
    detail = first["msg"].removeprefix("Value error, ")
    return f"{field}: {detail}" if field else detail

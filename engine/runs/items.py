"""Items to score, from data files or any iterable: validated one by one, numbered by their
place in the data, with an identity that survives a re-run of the same data."""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from collections.abc import AsyncIterable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..errors import ConfigError, DataError
from ..scoring import context_strings

Data = Union[Iterable[Any], AsyncIterable[Any], str, Path]

#: A variant of a scorer runs as `<id>@<label>` beside the original (`scorers compare`).
VARIANT_SEPARATOR = "@"


def base_id(scorer_id: str) -> str:
    """The scorer a variant id (`hallucination@strict`) is a variant of."""
    return scorer_id.split(VARIANT_SEPARATOR, 1)[0]

_KNOWN_FIELDS = ("input", "output", "context", "ground_truth", "id", "metadata", "expected", "turns", "expected_trajectory")


class EvalItem(BaseModel):
    """One item of the data. Keys other than the known ones are kept as metadata."""

    model_config = ConfigDict(extra="forbid")

    input: Any = None
    output: Any = Field(default=None, description="A pre-computed reply: no target is called for this item")
    context: list[str] | None = None
    ground_truth: Any = None
    turns: list[dict[str, Any]] | None = Field(
        default=None, description="A whole conversation (chat messages): scored as given, no target is called"
    )
    expected_trajectory: list[Union[str, dict[str, Any]]] | None = Field(
        default=None, description="The tool calls expected, in order: names, or {tool_name, args} objects"
    )
    id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    expected: Union[bool, float, dict[str, Union[bool, float]]] = Field(
        default_factory=dict,
        description="Human labels, to measure agreement: a score on the scorer's scale, or true when the scorer should "
        "flag the item (false: pass it); one value for every scorer, or a value by scorer id",
    )

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value

    @field_validator("context", mode="before")
    @classmethod
    def _context_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [value]
        if isinstance(value, (list, tuple)):
            return context_strings(value, "context")
        return value

    @classmethod
    def of(cls, value: Any) -> EvalItem:
        """An item from a dict (unknown keys → metadata), a bare string (the input), or an item."""
        if isinstance(value, EvalItem):
            return value
        if isinstance(value, str):
            return cls(input=value)
        if not isinstance(value, Mapping):
            raise ValueError(f"an item must be an object with an `input` (or a string), got {type(value).__name__}")
        known = {name: value[name] for name in _KNOWN_FIELDS if name in value}
        extra = {name: item for name, item in value.items() if name not in _KNOWN_FIELDS}
        if extra:
            metadata = known.get("metadata")
            if metadata is not None and not isinstance(metadata, Mapping):
                raise ValueError("`metadata` must be an object")
            known["metadata"] = {**extra, **(metadata or {})}
        return cls.model_validate(known)

    def expected_for(self, scorer_id: str) -> bool | float | None:
        """The label for a scorer; a variant (`hallucination@strict`) reads its base id's."""
        if isinstance(self.expected, dict):
            found = self.expected.get(scorer_id)
            return found if found is not None else self.expected.get(base_id(scorer_id))
        return self.expected

    @property
    def has_output(self) -> bool:
        """Whether the item carries the reply to score (an output or a whole conversation)."""
        return ("output" in self.model_fields_set and self.output is not None) or self.turns is not None

    @property
    def key(self) -> str:
        """The item's identity in a run: its `id`, else a hash of its content (so the same
        item in a rerun of the data is recognised; identical items count as one)."""
        if self.id is not None:
            return self.id
        content = self.model_dump(exclude={"id"}, exclude_none=True)
        digest = hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()
        return f"sha256:{digest[:20]}"


class UnreadableItem(BaseModel):
    """A line of a data file that is not an item; recorded as that item's error."""

    message: str


def read_jsonl(path: str | Path) -> Iterator[Any]:
    """Items of a JSONL file, one line at a time (blank lines skipped)."""
    path = Path(path)
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"cannot read {path}: {exc.strerror}") from None
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                yield UnreadableItem(message=f"{path}:{number}: invalid JSON: {exc.msg}")


def data_source(data: Data) -> Iterable[Any] | AsyncIterable[Any]:
    if isinstance(data, (str, Path)):
        path = Path(data)
        if path.suffix in (".jsonl", ".ndjson"):
            return read_jsonl(path)
        if path.suffix == ".json":
            try:
                loaded = json.loads(path.read_text(encoding="utf-8"))
            except OSError as exc:
                raise DataError(f"cannot read {path}: {exc.strerror}") from None
            except json.JSONDecodeError as exc:
                raise DataError(f"invalid JSON: {exc.msg}", path, exc.lineno) from None
            if not isinstance(loaded, list):
                raise DataError("a .json data file must hold a list of items", path)
            return loaded
        raise ConfigError(f"data file {path} must be .jsonl (one item per line) or .json (a list of items)")
    if isinstance(data, Mapping):
        raise ConfigError("data must be a list or an iterable of items, not one item")
    if not isinstance(data, (Iterable, AsyncIterable)):
        raise ConfigError(f"data must be a list, an iterable or a JSONL path, got {type(data).__name__}")
    return data


async def numbered(source: Iterable[Any] | AsyncIterable[Any]) -> AsyncIterable[tuple[int, Any]]:
    index = 0
    if isinstance(source, AsyncIterable):
        async for value in source:
            yield index, value
            index += 1
    else:
        for value in source:
            yield index, value
            index += 1


def select_items(data: Data, limit: int | None = None, sample: int | None = None, seed: int = 0) -> Data:
    """The first `limit` items, or `sample` items drawn at random (the same ones for the same
    `seed` and data, kept in their order in the data); the data as it is without either.
    A sample reads the data once and keeps only the sample (reservoir sampling)."""
    if limit is None and sample is None:
        return data
    for name, value in (("limit", limit), ("sample", sample)):
        if value is not None and value < 1:
            raise ConfigError(f"--{name} must be at least 1, got {value}")
    source = data_source(data)
    if isinstance(source, AsyncIterable):
        raise ConfigError("--limit and --sample need a data file or a list, not an async iterable")
    stream = itertools.islice(source, limit) if limit is not None else iter(source)
    if sample is None:
        return list(stream)
    generator = random.Random(seed)
    reservoir: list[tuple[int, Any]] = []
    for position, value in enumerate(stream):
        if position < sample:
            reservoir.append((position, value))
        else:
            slot = generator.randint(0, position)
            if slot < sample:
                reservoir[slot] = (position, value)
    return [value for _, value in sorted(reservoir, key=lambda pair: pair[0])]

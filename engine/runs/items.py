"""Items to score, from data files or any iterable: validated one by one, numbered by their
place in the data (a data file's line, 1-based; an iterable's position, 1-based), with an
identity that survives a re-run of the same data and a fingerprint of their content."""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from collections.abc import AsyncIterable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, FiniteFloat, field_validator

from ..errors import ConfigError, DataError
from ..scoring import RunInput, context_strings

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
    expected: Union[bool, FiniteFloat, dict[str, Union[bool, FiniteFloat]]] = Field(
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

    def run_input(self, reply: Any, run_id: str | None = None) -> RunInput:
        """What a scorer is given for this item, `reply` its output (the item's own, or the
        target's). A conversation without an output of its own: the scorer takes the last
        reply from the turns."""
        return RunInput(
            output=reply if self.turns is None or self.output is not None else None,
            input=self.input,
            context=self.context,
            ground_truth=self.ground_truth,
            turns=self.turns,
            expected_trajectory=self.expected_trajectory,
            metadata=self.metadata,
            run_id=run_id,
        )

    def key(self, line: int) -> str:
        """The item's identity in a run: its `id`, else its place in the data (`#7`: line 7),
        so that a changed item replaces its own earlier result instead of adding one."""
        return self.id if self.id is not None else f"#{line}"

    @property
    def fingerprint(self) -> str:
        """A hash of everything a scorer reads of the item (after normalisation): a stored
        result is reused only for an item with the same fingerprint."""
        content = self.model_dump(include={"input", "output", "context", "ground_truth"})
        return hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()[:20]


class UnreadableItem(BaseModel):
    """A line of a data file that is not an item; recorded as that item's error."""

    message: str


#: Byte-order marks of the encodings a text editor may save in place of UTF-8.
_OTHER_ENCODINGS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


def other_encoding(start: bytes) -> str | None:
    """The name of the encoding a file starting with `start` is in, when it is not UTF-8
    but says so (UTF-16 or UTF-32 with a byte-order mark, or UTF-16 without one: ASCII text
    with every other byte zero)."""
    for mark, name in _OTHER_ENCODINGS:
        if start.startswith(mark):
            return name
    if len(start) >= 4 and (start[1::2].count(0) == len(start[1::2]) or start[0::2].count(0) == len(start[0::2])):
        return "UTF-16"
    return None


def refuse_other_encoding(path: Path) -> None:
    """One error naming the file's encoding, instead of every line blamed as not UTF-8."""
    try:
        with path.open("rb") as handle:
            start = handle.read(64)
    except OSError as exc:
        raise DataError(f"cannot read {path}: {exc.strerror}") from None
    encoding = other_encoding(start)
    if encoding is not None:
        raise DataError(f"the file is {encoding} text; save it as UTF-8", path)


def _decoded(raw: bytes, path: Path, number: int) -> str | UnreadableItem:
    try:
        return raw.decode("utf-8-sig" if number == 1 else "utf-8")  # a byte-order mark is not part of the data
    except UnicodeDecodeError as exc:
        return UnreadableItem(message=f"{path}:{number}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); save the file as UTF-8")


def numbered_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """(line number, item) of a JSONL file, one line at a time (blank lines skipped); a line
    that is not an item becomes an UnreadableItem naming the file and line."""
    path = Path(path)
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise DataError(f"cannot read {path}: {exc.strerror}") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            line = _decoded(raw, path, number)
            if isinstance(line, UnreadableItem):
                yield number, line
                continue
            if not line.strip():
                continue
            try:
                yield number, json.loads(line, parse_constant=_refuse_constant)
            except (json.JSONDecodeError, ValueError) as exc:
                message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
                yield number, UnreadableItem(message=f"{path}:{number}: not valid JSON: {message}")


def read_jsonl(path: str | Path) -> Iterator[Any]:
    """Items of a JSONL file, one line at a time (blank lines skipped)."""
    for _, item in numbered_jsonl(path):
        yield item


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows; use a finite number or null")


def _read_json_list(path: Path) -> list[Any]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read {path}: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError(f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset {exc.start}; save the file as UTF-8", path, line) from None
    try:
        loaded = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise DataError(f"not valid JSON: {exc.msg}", path, exc.lineno) from None
    except ValueError as exc:
        raise DataError(str(exc), path) from None
    if not isinstance(loaded, list):
        raise DataError("a .json data file must hold a list of items", path)
    return loaded


#: Items with their 1-based number: a data file's line, or the position in an iterable.
NumberedSource = Union[Iterable[tuple[int, Any]], AsyncIterable[tuple[int, Any]]]


def data_source(data: Data) -> NumberedSource:
    """The items of `data`, numbered. Ids are checked to be unique first wherever the data
    can be read twice (files and lists), so that no judge is paid for a run refused later."""
    if isinstance(data, (str, Path)):
        path = Path(data)
        suffix = path.suffix.lower()
        if suffix in (".jsonl", ".ndjson"):
            refuse_other_encoding(path)
            check_unique_ids(numbered_jsonl(path), str(path), "lines")
            if next(numbered_jsonl(path), None) is None:
                raise DataError("the file is empty: no items to score (one JSON object per line)", path)
            return numbered_jsonl(path)
        if suffix == ".json":
            refuse_other_encoding(path)
            items = list(enumerate(_read_json_list(path), start=1))
            if not items:
                raise DataError("the file holds an empty list: no items to score", path)
            check_unique_ids(items, str(path))
            return items
        raise ConfigError(f"data file {path} must be .jsonl (one item per line) or .json (a list of items)")
    if isinstance(data, Mapping):
        raise ConfigError("data must be a list or an iterable of items, not one item")
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        listed = list(enumerate(data, start=1))
        check_unique_ids(listed, "data")
        return listed
    if not isinstance(data, (Iterable, AsyncIterable)):
        raise ConfigError(f"data must be a list, an iterable or a JSONL path, got {type(data).__name__}")
    return _numbered(data)


def _id_of(value: Any) -> str | None:
    raw = value.id if isinstance(value, EvalItem) else value.get("id") if isinstance(value, Mapping) else None
    if raw is None or isinstance(raw, bool):
        return None
    return str(raw) if isinstance(raw, (str, int, float)) else None


class UniqueIds:
    """Remembers the ids seen so far, for data read once (iterators)."""

    def __init__(self, where: str, noun: str = "items") -> None:
        self.where = where
        self.noun = noun
        self.lines: dict[str, int] = {}

    def duplicate(self, line: int, value: Any) -> str | None:
        """The message when `value`'s id was seen before, else None (and it is remembered)."""
        item_id = _id_of(value)
        if item_id is None:
            return None
        first = self.lines.setdefault(item_id, line)
        if first == line:
            return None
        return (
            f"{self.where}: {self.noun} {first} and {line} have the same id {item_id!r} (ids are compared as text: 1 and \"1\" "
            "are the same); give each item its own id"
        )


def check_unique_ids(items: Iterable[tuple[int, Any]], where: str, noun: str = "items") -> None:
    seen = UniqueIds(where, noun)
    for line, value in items:
        message = seen.duplicate(line, value)
        if message is not None:
            raise DataError(message.removeprefix(f"{where}: "), where)


async def _numbered(source: Iterable[Any] | AsyncIterable[Any]) -> AsyncIterable[tuple[int, Any]]:
    number = 1
    if isinstance(source, AsyncIterable):
        async for value in source:
            yield number, value
            number += 1
    else:
        for value in source:
            yield number, value
            number += 1


async def numbered(source: NumberedSource) -> AsyncIterable[tuple[int, int, Any]]:
    """(index from 0 in reading order, number, item)."""
    index = 0
    if isinstance(source, AsyncIterable):
        async for number, value in source:
            yield index, number, value
            index += 1
    else:
        for number, value in source:
            yield index, number, value
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
    # The data's own numbering is dropped: the selection is numbered by its position.
    stream = (value for _, value in itertools.islice(source, limit)) if limit is not None else (value for _, value in source)
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

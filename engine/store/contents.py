"""How a result is kept small: the text of its steps (prompts, system prompts, answers,
thinking) is cut at blank lines into pieces, and every piece long enough to be worth a row of
its own is kept once in the store's `contents` table, named by its digest and shared by every
record that holds it (a template's paragraphs by every item of every run; an item's context by
each step and scorer quoting it). What is left of a record (its item's fields, its steps'
figures, the pieces too short to share) is compressed into two small blobs on its row.

No SQL here: the stores write the pieces and the blobs; this module turns a record's parts
into them and back, exactly: a record read back equals the record saved.

- `item`: the item's fields (`CONTENT_FIELDS`), each as the JSON text it was saved as, one a
  line (compact JSON has no raw line break), an empty line for a field not given. Live
  content's retention clears the blob.
- `body`: four lines of JSON, the steps' ids, their answers (each the JSON text of the step's
  result), the rest of each step, and the jury's judges (their steps the same way). A text
  is a string (kept whole) or a list whose numbers point into the record's pieces. An
  export reads the first two lines only.

Compressed with zlib's deflate at level 6, raw (no header or checksum: a piece is named by the
digest of its text, a blob is read whole or not at all): on the prompts and answers of the
built-in scorers level 9 gives the same bytes and level 1 a few percent more; what a call
costs is setting up the compressor, not the level (docs/performance.md has the figures).
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from ..formatting import to_json
from ..scoring import JudgeVerdict, StepRecord

#: A paragraph this long or longer is a piece of its own (a row: its digest, its id and an
#: index entry, about 60 bytes); a shorter one stays in the record's blob, where it costs
#: less than a reference would.
PIECE_MIN = 80
LEVEL = 6
#: Raw deflate with a 32 KiB window; memory level 4 sets up in a third of the time of the
#: default 8 and gives the same size on texts of a few KiB.
_WINDOW, _MEMORY = -15, 4
_PARAGRAPH = "\n\n"
#: The step fields kept as text in pieces; the result is kept as its JSON text.
_TEXT_FIELDS = ("prompt", "system_prompt", "thinking")


def pack(text: str) -> bytes:
    """`text` compressed (lone surrogates, which JSON may carry, kept as they are)."""
    compressor = zlib.compressobj(LEVEL, zlib.DEFLATED, _WINDOW, _MEMORY)
    return compressor.compress(text.encode("utf-8", "surrogatepass")) + compressor.flush()


def unpack(data: bytes) -> str:
    return zlib.decompress(data, _WINDOW).decode("utf-8", "surrogatepass")


def digest(text: str) -> bytes:
    """The name of a piece: 16 bytes of BLAKE2b of its text (a collision by chance would
    need some 2**64 pieces)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


# ------------------------------------------------------------------------------------- item


def pack_item(values: Sequence[Any]) -> bytes | None:
    """The item's fields (in `CONTENT_FIELDS` order) as one blob; None when none is kept."""
    texts = ["" if value is None else to_json(value) for value in values]
    return pack("\n".join(texts)) if any(texts) else None


def item_texts(blob: bytes | None, fields: int) -> list[str | None]:
    """Each item field's JSON text as saved (None: not given), from `pack_item`'s blob."""
    if blob is None:
        return [None] * fields
    return [text or None for text in unpack(blob).split("\n")]


def unpack_item(blob: bytes | None, fields: int) -> list[Any]:
    return [None if text is None else json.loads(text) for text in item_texts(blob, fields)]


# ------------------------------------------------------------------------------------- body


class Body(NamedTuple):
    """A record's steps and jury as stored: the blob, and the pieces it points to (in the
    order of its numbers)."""

    blob: bytes | None
    pieces: list[str]


class _Pieces:
    """The pieces of one record, each once, numbered as they first appear."""

    def __init__(self) -> None:
        self.numbers: dict[str, int] = {}

    def text(self, text: str) -> str | list[str | int]:
        """`text` as a string kept whole or a list of kept paragraphs and piece numbers."""
        if len(text) < PIECE_MIN:
            return text
        encoded: list[str | int] = []
        kept: list[str] = []  # short paragraphs in a row, kept as one string
        for paragraph in text.split(_PARAGRAPH):
            if len(paragraph) < PIECE_MIN:
                kept.append(paragraph)
                continue
            if kept:
                encoded.append(_PARAGRAPH.join(kept))
                kept = []
            encoded.append(self.numbers.setdefault(paragraph, len(self.numbers)))
        if kept:
            encoded.append(_PARAGRAPH.join(kept))
        return encoded[0] if len(encoded) == 1 and isinstance(encoded[0], str) else encoded

    def steps(self, steps: dict[str, StepRecord]) -> list[Any]:
        ids = list(steps)
        results = [None if step.result is None else self.text(to_json(step.result)) for step in steps.values()]
        rests = []
        for step in steps.values():
            rest = step.model_dump(exclude_defaults=True, exclude={"id", "result", *_TEXT_FIELDS})
            for field in _TEXT_FIELDS:
                value = getattr(step, field)
                if value is not None:
                    rest[field] = self.text(value)
            rests.append(rest)
        return [ids, results, rests]


def pack_body(steps: dict[str, StepRecord], judges: list[JudgeVerdict] | None) -> Body:
    if not steps and judges is None:
        return Body(None, [])
    pieces = _Pieces()
    ids, results, rests = pieces.steps(steps)
    jury = None
    if judges is not None:
        jury = [{**judge.model_dump(exclude_defaults=True, exclude={"steps"}), "steps": pieces.steps(judge.steps)} for judge in judges]
    lines = (to_json(ids, separators=(",", ":")), to_json(results, separators=(",", ":")), to_json(rests, separators=(",", ":")),
             to_json(jury, separators=(",", ":")))  # fmt: skip
    return Body(pack("\n".join(lines)), list(pieces.numbers))


#: A text as a record's blob keeps it: whole, or paragraphs and the numbers of its pieces.
Encoded = str | list[str | int]


def text_of(encoded: Encoded, piece: Callable[[int], str]) -> str:
    """The text `encoded` stands for; `piece` gives the text of the record's piece of a number."""
    if isinstance(encoded, str):
        return encoded
    return _PARAGRAPH.join(part if isinstance(part, str) else piece(part) for part in encoded)


def numbers_in(encoded: Encoded | None) -> list[int]:
    """The piece numbers `encoded` points to."""
    return [part for part in encoded if isinstance(part, int)] if isinstance(encoded, list) else []


def _steps(ids: list[str], results: list[Any], rests: list[dict[str, Any]], pieces: Sequence[str]) -> dict[str, StepRecord]:
    steps = {}
    for step_id, answer, rest in zip(ids, results, rests):
        for field in _TEXT_FIELDS:
            if field in rest:
                rest[field] = text_of(rest[field], pieces.__getitem__)
        rest["id"] = step_id
        if answer is not None:
            rest["result"] = json.loads(text_of(answer, pieces.__getitem__))
        steps[step_id] = StepRecord.model_validate(rest)
    return steps


def unpack_body(blob: bytes | None, pieces: Sequence[str]) -> tuple[dict[str, StepRecord], list[JudgeVerdict] | None]:
    """The steps and the jury of `pack_body`'s blob, given the texts of its pieces."""
    if blob is None:
        return {}, None
    ids, results, rests, jury = (json.loads(line) for line in unpack(blob).split("\n"))
    steps = _steps(ids, results, rests, pieces)
    if jury is None:
        return steps, None
    judges = []
    for judge in jury:
        judge_ids, judge_results, judge_rests = judge["steps"]
        judge["steps"] = _steps(judge_ids, judge_results, judge_rests, pieces)
        judges.append(JudgeVerdict.model_validate(judge))
    return steps, judges


def answers(blob: bytes | None) -> dict[str, Encoded | None]:
    """Each step's answer, the JSON text of its result as `text_of` reads it (None: no
    answer), from the blob's first two lines only: what an export writes."""
    if blob is None:
        return {}
    ids, encoded = (json.loads(line) for line in unpack(blob).split("\n", 2)[:2])
    return dict(zip(ids, encoded))


def step_ids(blob: bytes | None) -> list[str]:
    if blob is None:
        return []
    ids: list[str] = json.loads(unpack(blob).split("\n", 1)[0])
    return ids

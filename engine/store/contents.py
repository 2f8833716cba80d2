"""How a result is kept small. The text of its steps (prompts, system prompts, answers,
thinking) is cut at blank lines into paragraphs; a long paragraph (or a long answer) that two
records hold is a piece, kept once in the store's `contents` table, named by its digest and
shared by every record that holds it: a template's paragraphs by every item of every run, an
item's context by each run that judges it again. A record's own text (its item's context,
its claims, its verdicts) stays in the record, compressed with the rest of it: read back
with it, and gone with it. The table also keeps the digest of each long text a record kept as
its own, so the next record that holds the text makes it a piece: a text is kept twice at
most, and once for every record after the second.

What is left of a record is compressed into two small blobs on its row. No SQL here: the
stores write the pieces and the blobs (engine/store/sql.py); this module turns a record's
parts into them and back, exactly: a record read back equals the record saved.

Each blob is one JSON list, an element a line (compact JSON has no line break of its own): a
reader that wants everything parses it in one call, an export cuts it at its line breaks.

- `item`: the item's fields (`CONTENT_FIELDS`), each the JSON text it was saved as (null:
  not given). Live content's retention clears the blob.
- `body`: each step's result, a line each (a list of one holding it, written as `to_json`
  writes it, or the number of the piece of its JSON text, or null for none); the rest of
  each step; the jury's judges (their steps the same way). A text is a string (kept whole) or
  a list whose numbers point into the record's pieces. The steps' ids are a column beside it
  (`step_ids`), in the same order.

Compressed with zlib's deflate at level 6, raw (no header or checksum: a piece is named by the
digest of its text, a blob is read whole or not at all). On the bench's records levels 1, 6
and 9 give sizes within a fraction of a percent, and on texts this small what a call costs is
setting up the compressor, not the level: 6, zlib's own default, is kept for texts where the
level does matter (long contexts). bench/RESULTS.md has the figures.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Container, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from ..formatting import to_json
from ..scoring import JudgeVerdict, StepRecord

#: A paragraph this long or longer may be a piece (a row: its digest, its id and an index
#: entry, about 60 bytes); a shorter one always stays in the record's blob, where it costs
#: less than a reference would.
PIECE_MIN = 80
LEVEL = 6
#: Raw deflate with a 32 KiB window; memory level 4 sets up in a third of the time of the
#: default 8 and gives the same size on texts of a few KiB.
_WINDOW, _MEMORY = -15, 4
_PARAGRAPH = "\n\n"
_LINE = ",\n"
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


def _lines(texts: Sequence[str]) -> str:
    """JSON texts as one JSON list, one a line: parsed whole in one call, or cut at its line
    breaks (compact JSON has none of its own) into the texts as they were written."""
    return "[" + _LINE.join(texts) + "]"


def _cut(text: str) -> list[str]:
    """The texts of `_lines`, as they were written."""
    return text[1:-1].split(_LINE)


def pack_item(values: Sequence[Any]) -> bytes | None:
    """The item's fields (in `CONTENT_FIELDS` order) as one blob; None when none is kept."""
    if all(value is None for value in values):
        return None
    return pack(_lines(["null" if value is None else to_json(value) for value in values]))


def item_texts(blob: bytes | None, fields: int) -> list[str | None]:
    """Each item field's JSON text as saved (None: not given), from `pack_item`'s blob."""
    if blob is None:
        return [None] * fields
    return [None if text == "null" else text for text in _cut(unpack(blob))]


def unpack_item(blob: bytes | None, fields: int) -> list[Any]:
    values: list[Any] = [None] * fields if blob is None else json.loads(unpack(blob))
    return values


# ------------------------------------------------------------------------------------- body


class Body(NamedTuple):
    """A record's steps and jury as stored: the blob, the pieces it points to (in the order of
    its numbers), and the steps' ids (a JSON list, kept beside the blob: an export reads the
    ids of every record before the first row)."""

    blob: bytes | None
    pieces: list[str]
    step_ids: str | None


def _all_steps(steps: dict[str, StepRecord], judges: list[JudgeVerdict] | None) -> list[StepRecord]:
    return [*steps.values(), *(step for judge in judges or [] for step in judge.steps.values())]


def long_texts(steps: dict[str, StepRecord], judges: list[JudgeVerdict] | None, answers: dict[int, str]) -> set[str]:
    """What of a record may be a piece: its steps' paragraphs of PIECE_MIN characters or more,
    and the JSON text of each result as long (its jury's steps too). `answers` is given the
    JSON text of each step's result (by the step's id()), for `pack_body`."""
    found: set[str] = set()
    for step in _all_steps(steps, judges):
        for text in (step.prompt, step.system_prompt, step.thinking):
            if text is not None and len(text) >= PIECE_MIN:
                found.update(paragraph for paragraph in text.split(_PARAGRAPH) if len(paragraph) >= PIECE_MIN)
        if step.result is not None:
            answer = answers[id(step)] = to_json(step.result)
            if len(answer) >= PIECE_MIN:
                found.add(answer)
    return found


class _Pieces:
    """The pieces of one record, each once, numbered as they first appear. A long text that
    is not `shared` stays in the record's blob."""

    def __init__(self, shared: Container[str], answers: dict[int, str]) -> None:
        self.shared = shared
        self.answers = answers
        self.numbers: dict[str, int] = {}

    def text(self, text: str) -> str | list[str | int]:
        """`text` as a string kept whole or a list of kept paragraphs and piece numbers."""
        if len(text) < PIECE_MIN:
            return text
        encoded: list[str | int] = []
        kept: list[str] = []  # paragraphs kept in the blob, in a row, as one string
        for paragraph in text.split(_PARAGRAPH):
            if len(paragraph) < PIECE_MIN or paragraph not in self.shared:
                kept.append(paragraph)
                continue
            if kept:
                encoded.append(_PARAGRAPH.join(kept))
                kept = []
            encoded.append(self.numbers.setdefault(paragraph, len(self.numbers)))
        if kept:
            encoded.append(_PARAGRAPH.join(kept))
        return encoded[0] if len(encoded) == 1 and isinstance(encoded[0], str) else encoded

    def answer(self, step: StepRecord) -> str:
        """A step's result as its line of the blob: null for none, a list of one holding it
        (as `to_json` writes it), or the number of the piece of its JSON text (a compact JSON
        text is one paragraph)."""
        if step.result is None:
            return "null"
        text = self.answers.get(id(step)) or to_json(step.result)
        if len(text) >= PIECE_MIN and text in self.shared:
            return str(self.numbers.setdefault(text, len(self.numbers)))
        return f"[{text}]"

    def steps(self, steps: dict[str, StepRecord]) -> list[Any]:
        rests = []
        for step in steps.values():
            rest = step.model_dump(exclude_defaults=True, exclude={"id", "result", *_TEXT_FIELDS})
            for field in _TEXT_FIELDS:
                value = getattr(step, field)
                if value is not None:
                    rest[field] = self.text(value)
            rests.append(rest)
        return [list(steps), [self.answer(step) for step in steps.values()], rests]


def pack_body(
    steps: dict[str, StepRecord], judges: list[JudgeVerdict] | None, shared: Container[str] = frozenset(), answers: dict[int, str] | None = None
) -> Body:
    """The record's steps and jury as a blob; the texts in `shared` (see `long_texts`, which
    gives `answers`) as pieces."""
    if not steps and judges is None:
        return Body(None, [], None)
    pieces = _Pieces(shared, answers or {})
    ids, results, rests = pieces.steps(steps)
    jury = None
    if judges is not None:
        jury = []
        for judge in judges:
            judge_ids, judge_results, judge_rests = pieces.steps(judge.steps)
            jury.append({**judge.model_dump(exclude_defaults=True, exclude={"steps"}), "steps": [judge_ids, [json.loads(line) for line in judge_results], judge_rests]})
    # Each result a line of its own, written as `to_json` writes it: an export takes its text
    # from the line as it is.
    lines = [*results, to_json(rests, separators=(",", ":")), to_json(jury, separators=(",", ":"))]
    return Body(pack(_lines(lines)), list(pieces.numbers), to_json(ids, separators=(",", ":")))


#: A text as a record's blob keeps it: whole, or paragraphs and the numbers of its pieces.
Encoded = str | list[str | int]


def _text(encoded: Encoded, pieces: Sequence[str]) -> str:
    """The text `encoded` stands for, given the texts of the record's pieces."""
    if isinstance(encoded, str):
        return encoded
    return _PARAGRAPH.join([part if isinstance(part, str) else pieces[part] for part in encoded])


def _steps(ids: Sequence[str], results: list[Any], rests: list[dict[str, Any]], pieces: Sequence[str]) -> dict[str, dict[str, Any]]:
    steps = {}
    for step_id, answer, rest in zip(ids, results, rests):
        for field in _TEXT_FIELDS:
            if field in rest:
                rest[field] = _text(rest[field], pieces)
        rest["id"] = step_id
        if answer is not None:
            rest["result"] = json.loads(pieces[answer]) if isinstance(answer, int) else answer[0]
        steps[step_id] = rest
    return steps


def unpack_body(blob: bytes | None, step_ids: str | None, pieces: Sequence[str]) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]] | None]:
    """The steps and the jury of `pack_body`'s blob, given the texts of its pieces, as the
    fields of their StepRecords and JudgeVerdicts (validated with the record, in one call)."""
    if blob is None:
        return {}, None
    *results, rests, jury = json.loads(unpack(blob))
    steps = _steps(listed_ids(step_ids or "[]"), results, rests, pieces)
    if jury is not None:
        for judge in jury:
            judge_ids, judge_results, judge_rests = judge["steps"]
            judge["steps"] = _steps(judge_ids, judge_results, judge_rests, pieces)
    return steps, jury


@lru_cache(maxsize=256)
def listed_ids(step_ids: str) -> tuple[str, ...]:
    """The ids of a `step_ids` column (a few lists serve a run's every record)."""
    return tuple(json.loads(step_ids))


def answers(blob: bytes | None, step_ids: str | None) -> dict[str, str | int | None]:
    """Each step's answer as an export writes it: the JSON text of its result as saved (None:
    no result), or the number of the piece that holds it. The results come first in the
    blob: the rest of it (the prompts) is inflated only when they are long."""
    if blob is None or step_ids is None:
        return {}
    ids = listed_ids(step_ids)
    inflater = zlib.decompressobj(_WINDOW)
    head = inflater.decompress(blob, 1024)
    if head.count(b",\n") < len(ids):
        head += inflater.decompress(inflater.unconsumed_tail) + inflater.flush()
    # Cut at line breaks (ASCII: never inside a character of several bytes), then decoded.
    lines = [line.decode("utf-8", "surrogatepass") for line in head[1:].split(b",\n", len(ids))[: len(ids)]]
    return {step: None if line == "null" else line[1:-1] if line[0] == "[" else int(line) for step, line in zip(ids, lines)}

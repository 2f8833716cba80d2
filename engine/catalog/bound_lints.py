"""The warning of `scorers check` about answers a small judge can fill to no purpose: a free
string or a list of a judge step's answer that nothing bounds but the default (1000
characters, 100 items), neither its schema nor the step's `bounds:` (worked out from the item
and earlier answers). A judge decoding under the schema, caught in a loop, writes up to that
default; a bound from the inputs ends it where a right answer ends. Its code,
`unbounded-answer`, silences it at the step's `schema:` line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..scoring.plan import ScorerPlan
from ..scoring.steps.bounds import FieldBounds
from .answers import field_path, schema_file
from .schema_limits import subschemas
from .source import CatalogSource, Place, position
from .spec import ScorerDefinition
from .warning import CatalogWarning

#: What bounds a list, and what bounds a string, among a step's `bounds:` keywords.
_BOUNDING = {"maxItems": ("items", "max_items"), "maxLength": ("max_length", "enum")}
#: A bound to show as an example, by what it bounds.
_EXAMPLE = {"maxItems": '{max_items: "sentences(output) | length + 2"}', "maxLength": "{max_length: 300}"}


def unbounded_answer_fields(source: CatalogSource, compiled: Mapping[str, tuple[ScorerDefinition, ScorerPlan]]) -> list[ConfigError]:
    """One warning per judge step of the catalog's own scorers and field of its answer left
    to the default bound, at the step's `schema:`."""
    defaulted: dict[Path, list[tuple[str, str, int]]] = {}
    warnings: list[ConfigError] = []
    for definition, raw in _own_scorers(source, compiled):
        for index, step in enumerate(definition.steps):
            name = getattr(step, "answer_schema", None)
            found = source.schema_file(name) if isinstance(name, str) else None
            if found is None:
                continue
            if found not in defaulted:
                defaulted[found] = _defaulted(found)
            bounds: Mapping[str, FieldBounds] = getattr(step, "bounds", None) or {}
            for path, keyword, bound in defaulted[found]:
                written = bounds.get(path)
                if written is not None and any(getattr(written, word) is not None for word in _BOUNDING[keyword]):
                    continue
                unit, kind = ("items", "list") if keyword == "maxItems" else ("characters", "string")
                place = position(raw, ["steps", index, "schema"], value=True)
                message = (
                    f"{definition.id}.{step.id}: {path} is a free {kind} with no bound worked out from the item (only the default "
                    f"{bound} {unit}, which a looping judge fills); bound it in the step's `bounds:`, e.g. {path}: {_EXAMPLE[keyword]}"
                )
                file, line, column = place or (str(source.path), None, None)
                warnings.append(CatalogWarning(message, file, line, column, code="unbounded-answer"))
    return warnings


def _own_scorers(source: CatalogSource, compiled: Mapping[str, tuple[ScorerDefinition, ScorerPlan]]) -> Iterator[tuple[ScorerDefinition, Any]]:
    """The catalog's own scorers that compiled clean, each with its definition as written (merged, with places)."""
    for scorer_id in source.scorers:
        if scorer_id in compiled:
            yield compiled[scorer_id][0], source.raw_definition(scorer_id)


def _defaulted(path: Path) -> list[tuple[str, str, int]]:
    """(field, keyword, default) of every field of a schema file left to a default bound."""
    try:
        compiled = schema_file(path)
    except ConfigError:
        return []  # reported by the compiler
    placed = sorted(compiled.defaulted, key=lambda found: _line_of(compiled.data, found[0]))
    return [(field_path(loc), keyword, bound) for loc, keyword, bound in placed]


def _line_of(data: Any, loc: list[Any]) -> tuple[int, int]:
    """Where a field is written, for the warnings' order (a list before its items)."""
    place = position(data, loc)
    return (place.line or 0, place.column or 0) if place is not None else (0, 0)


def copied_fields_capped(source: CatalogSource, compiled: Mapping[str, tuple[ScorerDefinition, ScorerPlan]]) -> list[ConfigError]:
    """A warning at the `maxLength` (or `max_length:` bound) of a field a step's bounds tie to
    an earlier step's list (`verdicts[].statement: {enum: preprocess.claims}`), when that cap is
    shorter than the items it must copy may be: a claim longer than the cap can never be copied,
    so every answer to an output holding one is refused, re-asked and lost. Where the items
    are bounded by an expression of the item, a cap of `_LONG_ITEM` characters or more is
    taken as meant."""
    warnings: list[ConfigError] = []
    for definition, raw in _own_scorers(source, compiled):
        earlier: dict[str, Any] = {}
        for index, step in enumerate(definition.steps):
            bounds: Mapping[str, FieldBounds] = getattr(step, "bounds", None) or {}
            for path, written in bounds.items():
                copied = re.fullmatch(r"\s*([A-Za-z_]\w*)\.([A-Za-z_]\w*)\s*", written.enum or "")
                origin = earlier.get(copied[1]) if copied else None
                cap = _cap(source, step, path, written, raw, index) if origin is not None else None
                if cap is None or copied is None:
                    continue
                length, place = cap
                longest = _cap(source, origin, f"{copied[2]}[]", (getattr(origin, "bounds", None) or {}).get(f"{copied[2]}[]"), None, None)
                most = longest[0] if longest is not None else _DEFAULT_LENGTH
                if isinstance(length, str) or (most if isinstance(most, int) else _LONG_ITEM) <= length:
                    continue
                may_be = f"up to `{most}` characters, worked out from the item" if isinstance(most, str) else f"up to {most} characters"
                file, line, column = place or (str(source.path), None, None)
                warnings.append(CatalogWarning(
                    f"{definition.id}.{step.id}: {path} must copy an item of {written.enum} word for word (its `enum:` bound), but it is capped at "
                    f"{length} characters while those items may be {may_be}: an item longer than that can never be copied, so the judge's "
                    f"answer is refused at every try; drop the cap (the `enum:` bounds it), or make it hold the longest item",
                    file, line, column, code="copied-field-capped",
                ))
            earlier[step.id] = step
            warnings += _lists_capped(source, definition, step)
    return warnings


#: A schema's `maxItems` below this many, on a list whose count the step's bounds work out from
#: the item, is taken for a cap on what an item holds rather than a guard against a loop.
_FEW_ITEMS = 20


def _lists_capped(source: CatalogSource, definition: ScorerDefinition, step: Any) -> list[ConfigError]:
    """A warning at a schema's `maxItems` that caps a list whose count the step's bounds work
    out from the item (`verdicts: {items: "tool_calls | length"}`, `claims: {max_items:
    "sentences(output) | length + 2"}`): an item with more has no answer the schema accepts, or
    has its claims past the cap never judged."""
    bounds: Mapping[str, FieldBounds] = getattr(step, "bounds", None) or {}
    data = _schema_data(source, step)
    found: list[ConfigError] = []
    for path, written in bounds.items():
        counted = written.items if isinstance(written.items, str) else written.max_items if isinstance(written.max_items, str) else None
        for node in _schema_nodes(data, path) if counted is not None else []:
            cap = node.get("maxItems")
            if not isinstance(cap, int) or isinstance(cap, bool) or cap >= _FEW_ITEMS:
                continue
            what = "an item with more has no answer the schema accepts" if written.items is not None else f"what the item holds past the first {cap} is never judged"
            file, line, column = position(node, ["maxItems"], value=True) or (str(source.path), None, None)
            found.append(CatalogWarning(
                f"{definition.id}.{step.id}: {path} is capped at {cap} items by its schema's maxItems, but the step's bounds count it from the item "
                f"(`{counted}`): {what}; drop the maxItems (the bound keeps a looping judge short), or raise it past any item's count",
                file, line, column, code="list-capped",
            ))
    return found


def _schema_data(source: CatalogSource, step: Any) -> Any:
    """The answer schema file of a step as written (None when it has none or it does not compile)."""
    name = getattr(step, "answer_schema", None)
    found = source.schema_file(name) if isinstance(name, str) else None
    try:
        return schema_file(found).data if found is not None else None
    except ConfigError:
        return None  # reported by the compiler


#: The characters a string of an answer holds when nothing bounds it (see answers.py).
_DEFAULT_LENGTH = 1000
#: A cap of a copied field that a long sentence of a real output may pass, where the items it
#: copies are bounded by what the output holds (an expression): a cap this long is a choice.
_LONG_ITEM = 500


def _cap(source: CatalogSource, step: Any, path: str, written: FieldBounds | None, raw: Any, index: int | None) -> tuple[int | str, Place | None] | None:
    """A string field's cap, and where it is written: the step's `max_length:` bound (a number,
    or an expression), else its schema's `maxLength`; None when neither caps it."""
    if written is not None and written.max_length is not None:
        place = position(raw, ["steps", index, "bounds", path, "max_length"], value=True) if raw is not None and index is not None else None
        return written.max_length, place
    data = _schema_data(source, step)
    for node in _schema_nodes(data, path):
        length = node.get("maxLength")
        if isinstance(length, int) and not isinstance(length, bool):
            return length, position(node, ["maxLength"], value=True)
    return None


def _schema_nodes(data: Any, path: str) -> list[Any]:
    """The schemas of the field a step's `bounds:` names (`verdicts[].statement`) in a schema file as written."""
    return [node for field, node in subschemas(data, []) if field == path.replace("[]", "")] if data is not None else []

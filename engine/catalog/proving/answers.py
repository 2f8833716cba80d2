"""Answers made from a step's answer schema, deterministically, for `scorers check` to run a
scorer on: each value of a choice field (an enum, a boolean, a number's least and greatest)
chosen by a policy, lists as short or as long as the request's bounds allow, optional fields
given or left out.

The schema read is the one a request carries (its bounds worked out for the earlier answers),
so an answer made here is one a judge decoding under that schema could write.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .meanings import NOTHING, Meaning, Polarity

ListLength = Literal["least", "one", "most"]
#: How long "most" makes a list its bounds leave open; a longer list tells a score nothing more.
MOST_ITEMS = 3


@dataclass(frozen=True)
class Pick:
    """How a choice field is filled: `index` picks its domain's value at that index (-1, the
    last) everywhere; `rotate` gives the item at position p the value at (p + rotate); `polarity`
    gives the item at position p a value meaning `polarity[p % len]` (its declared meaning)."""

    index: int | None = None
    rotate: int | None = None
    polarity: tuple[Polarity, ...] | None = None


@dataclass(frozen=True)
class Scenario:
    """One way of answering every judged step of a scorer."""

    label: str
    lists: ListLength = "most"
    picks: Mapping[str, Pick] = field(default_factory=dict)
    #: A pick for every choice field that none in `picks` names.
    default: Pick | None = None
    omit_optional: bool = False
    #: The count `most` makes an open list (at least the longest domain, for `rotate`).
    most: int = MOST_ITEMS
    #: Whether the item's input, ground truth and context are blank (the output is not).
    blank_item: bool = False
    #: Whether the lists of one answer differ in length (the first as long as `lists` says,
    #: the others of one item): what a rule comparing two lists of an answer must refuse.
    uneven: bool = False
    #: Whether the item's output is empty (tried on a scorer that scores an empty output).
    empty_output: bool = False
    #: Whether answers are made from the step's own schema, not the request's bounds: lists a
    #: bound asks items for (one per sentence of the output) empty, as for an output with none.
    unbounded: bool = False




def choice_domain(node: Mapping[str, Any]) -> list[Any] | None:
    """The values a choice field takes in answers made here (None: not a choice field)."""
    if "enum" in node:
        return list(node["enum"]) or None
    kind = node.get("type")
    if kind == "boolean":
        return [False, True]
    if kind not in ("integer", "number"):
        return None
    least = node.get("minimum", node["exclusiveMinimum"] + (1 if kind == "integer" else 1e-6) if "exclusiveMinimum" in node else None)
    most = node.get("maximum", node["exclusiveMaximum"] - (1 if kind == "integer" else 1e-6) if "exclusiveMaximum" in node else None)
    if least is None and most is None:
        least, most = 0, 10
    elif least is None:
        least = most - 10
    elif most is None:
        most = least + 10
    if kind == "integer":
        least, most = math.ceil(least), math.floor(most)
        if most - least <= 5:
            return list(range(least, most + 1))
        return [least, (least + most) // 2, most]
    return [least, most]


def choice_fields(schema: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Every choice field of an answer schema (a JSON schema, `$defs` and all), by its path
    (`verdicts[].verdict`), with its domain."""
    found: dict[str, list[Any]] = {}
    definitions = schema.get("$defs", {})

    def walk(node: Mapping[str, Any], path: str) -> None:
        node = _resolved(node, definitions)
        domain = choice_domain(node)
        if domain is not None:
            found[path] = domain
        elif node.get("type") == "object":
            for key, child in (node.get("properties") or {}).items():
                walk(child, f"{path}.{key}" if path else key)
        elif node.get("type") == "array":
            walk(node.get("items") or {}, f"{path}[]")

    walk(schema, "")
    return found


def _resolved(node: Mapping[str, Any], definitions: Mapping[str, Any]) -> Mapping[str, Any]:
    while True:
        if "$ref" in node:
            node = definitions[str(node["$ref"]).rsplit("/", 1)[-1]]
        elif "anyOf" in node:
            node = next((option for option in node["anyOf"] if option.get("type") != "null"), {})
        else:
            return node


class AnswerMaker:
    """Makes the answers of one scenario; `meanings` says which value of a field is good or bad
    (by field path), for picks by polarity; `positional` names the fields a list fills by
    position when no pick names them (texts copied from an earlier step, such as statements)."""

    def __init__(self, scenario: Scenario, meanings: Mapping[str, Meaning], positional: frozenset[str]) -> None:
        self.scenario = scenario
        self.meanings = meanings
        self.positional = positional

    def answer(self, step: str, schema: Mapping[str, Any]) -> Any:
        self.definitions = schema.get("$defs", {})
        self.lists_made = 0
        return self._make(schema, step, "", 0, "answer")

    def _make(self, node: Mapping[str, Any], step: str, path: str, position: int, name: str) -> Any:
        node = _resolved(node, self.definitions)
        domain = choice_domain(node)
        if domain is not None:
            return self._pick(domain, step, path, position)
        kind = node.get("type")
        if kind == "object":
            required = set(node.get("required") or [])
            made = {}
            for key, child in (node.get("properties") or {}).items():
                if self.scenario.omit_optional and key not in required:
                    continue
                made[key] = self._make(child, step, f"{path}.{key}" if path else key, position, key)
            return made
        if kind == "array":
            return [self._make(node.get("items") or {}, step, f"{path}[]", index, name) for index in range(self._count(node))]
        if kind == "string":
            least, most = int(node.get("minLength", 0)), int(node.get("maxLength", 1000))
            if self.scenario.lists == "least":
                return "".ljust(least, ".")[:most]  # the shortest text, as lists are the shortest
            text = f"{name.rstrip('s') or name} {position + 1}"
            return text.ljust(least, ".")[:most]
        return None

    def _count(self, node: Mapping[str, Any]) -> int:
        least = int(node.get("minItems", 0))
        most = int(node.get("maxItems", 1000))
        wanted = {"least": least, "one": 1, "most": self.scenario.most}[self.scenario.lists]
        if self.scenario.uneven and self.lists_made > 0:
            wanted = 1 if wanted != 1 else self.scenario.most
        self.lists_made += 1
        return max(least, min(most, wanted))

    def _pick(self, domain: list[Any], step: str, path: str, position: int) -> Any:
        qualified = f"{step}.{path}"
        pick = self.scenario.picks.get(qualified)
        if pick is None and qualified not in self.positional:
            pick = self.scenario.default
        if pick is None:
            return domain[position % len(domain)]
        if pick.polarity is not None:
            meaning = self.meanings.get(qualified)
            wanted = pick.polarity[position % len(pick.polarity)]
            if meaning is not None:
                chosen = meaning.value_of(domain, wanted)
                if chosen is not NOTHING:
                    return chosen
            return domain[0]
        if pick.rotate is not None:
            return domain[(position + pick.rotate) % len(domain)]
        assert pick.index is not None
        return domain[pick.index % len(domain)] if pick.index >= 0 else domain[pick.index]

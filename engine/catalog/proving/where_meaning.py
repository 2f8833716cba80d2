"""A reducer's `where` that counts values of opposite meanings together: `item.verdict !=
'no'` over verdicts yes (good), no (bad) and unsure (bad) counts the unsure ones with the good,
so the share is neither of good answers nor of bad ones. Each value of the field `where`
reads is tried alone; named at the `where:` line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Protocol

from jinja2 import TemplateError

from ..source import Place
from ..templates import sandbox
from .meanings import Meaning


class ScorerProof(Protocol):
    """What this proof reads of properties.py's ScorerProof."""

    score_index: int

    @property
    def label(self) -> str: ...
    def at(self, *loc: Any, value: bool = True) -> Place | None: ...
    def warning(self, code: str, message: str, place: Place | None) -> None: ...
    def _score_raw(self) -> Mapping[str, Any]: ...


def where_mixes_meanings(proof: ScorerProof, meanings: Mapping[str, Meaning]) -> None:
    """A warning at each `where:` of a `ratio` or `count` that holds for a value meaning good
    and for one meaning bad of the field of the items it reads."""
    for name, value in (proof._score_raw().get("values") or {}).items():
        if not isinstance(value, Mapping) or value.get("reduce") not in ("ratio", "count"):
            continue
        where, items = value.get("where"), value.get("items")
        if not isinstance(where, str) or not isinstance(items, str):
            continue
        for field in dict.fromkeys(re.findall(r"\bitem\.(\w+)", where)):
            meaning = meanings.get(f"{items}[].{field}")
            if meaning is None or not meaning.polarities:
                continue
            counted = _counted(where, field, list(meaning.polarities))
            if counted is None:
                continue
            good = [each for each in counted if meaning.polarities[each] == "good"]
            bad = [each for each in counted if meaning.polarities[each] == "bad"]
            if not good or not bad:
                continue
            shown = ", ".join(f"{each!r} ({meaning.polarities[each]})" for each in counted)
            proof.warning(
                "where-mixes-meanings",
                f"{proof.label}.score: `where: {where}` counts {shown} together: the {field}s its schema says are good with "
                f"{'one' if len(bad) == 1 else 'those'} it says {'is' if len(bad) == 1 else 'are'} bad, so `{name}` is a share of neither; "
                f"count one side (`item.{field} == {good[0]!r}`)",
                proof.at("steps", proof.score_index, "values", name, "where"),
            )
            break


def _counted(where: str, field: str, values: list[Any]) -> list[Any] | None:
    """The values of `field` for which `where` holds of an item holding only it (None when
    `where` cannot be run on such an item)."""
    try:
        test = sandbox().compile_expression(where)
        return [each for each in values if test(item={field: each})]
    except (TemplateError, TypeError, ValueError, AttributeError, KeyError):
        return None

"""The examples a judge-free scorer's description quotes, run as outputs and held to the score
the description gives them. "1 when the reply gives a price written the German way ("1.234,50
€")" is an output the scorer must score 1; "compared ignoring accents ("Zürich" equals
"Zurich")" is an output and an expected answer the scorer must find equal. A pattern kept from
another market, or a `normalize()` that keeps the accents, scores them otherwise with no error:
named at the setting the author wrote (their own option, else their own computed value).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ...errors import ConfigError
from ...scoring.plan import ScorerPlan
from ...scoring.preview import SAMPLE_ITEM
from ..source import CatalogSource, Place, position
from ..spec import ScorerDefinition
from ..warning import CatalogWarning
from .item_trials import option_defaults, own_values, run_items

_QUOTED = r"[\"“](?P<{0}>[^\"”]{{1,80}})[\"”]"
#: Two texts the description calls the same: `"Zürich" equals "Zurich"`, `"A" and "B" match`.
_SAME = (
    re.compile(_QUOTED.format("first") + r"\s+(?:equals|matches|is the same as|counts as)\s+" + _QUOTED.format("second"), re.IGNORECASE),
    re.compile(_QUOTED.format("first") + r"\s+and\s+" + _QUOTED.format("second") + r"\s+(?:are|count as)\s+(?:equal|the same|a match)", re.IGNORECASE),
)
#: A number and the clause it is given for, up to the next number given (`..., else 0`).
_CLAUSE = re.compile(r"(?<![\w.])(?P<number>\d+(?:\.\d+)?)\s+(?:when|if)\b(?P<clause>.*?)(?=(?:[,;.]\s*(?:else|otherwise)\b|\b\d+(?:\.\d+)?\s+(?:when|if)\b|$))", re.IGNORECASE)
#: Words of a clause that make its quoted texts what the output must not hold.
_NOT = re.compile(r"\b(?:no|not|never|without|avoids?|free of|none|neither|nor|except|unlike|instead of|rather than)\b", re.IGNORECASE)
#: The most examples run, to keep `check` quick.
_MOST = 4


def examples_against_description(source: CatalogSource, definition: ScorerDefinition, plan: ScorerPlan) -> list[ConfigError]:
    """`example-against-description` at the author's setting when an example the description
    quotes scores otherwise than the description says."""
    description = " ".join((definition.description or "").split())
    defaults = option_defaults(plan)
    found = plan.scores_range(defaults)
    if found is None or '"' not in description and "“" not in description:
        return []
    best = found[1] if plan.direction == "higher_is_better" else found[0]
    scale = found[1] if found[1] > 1 else 1.0
    for example, wanted, item in list(_examples(description, best, scale))[:_MOST]:
        trials = run_items(plan, {"example": item})
        scored = trials[0].score if trials else None
        if scored is None or abs(scored - wanted) < 1e-9:
            continue
        setting, place = _setting_of(source, definition)
        file, line, column = place or (str(source.path), None, None)
        return [CatalogWarning(
            f"{definition.id}.{setting}: the description gives {wanted:g} to {example}, but that scores {scored:g}: "
            f"`{setting.rpartition('.')[2]}` does not find what the description says; change it, or the description",
            file, line, column, code="example-against-description",
        )]
    return []


def _examples(description: str, best: float, scale: float) -> Iterator[tuple[str, float, Any]]:
    """Each example the description quotes: how a message names it, the score it is given
    and the item that holds it."""
    for same in (found for pattern in _SAME for found in pattern.finditer(description)):
        first, second = same["first"], same["second"]
        if first != second:
            yield f"{first!r} against the expected answer {second!r}", best, dataclasses.replace(SAMPLE_ITEM, output=first, ground_truth=second)
    for clause in _CLAUSE.finditer(description):
        if _NOT.search(clause["clause"]) or any(pattern.search(clause["clause"]) for pattern in _SAME):
            continue
        for quoted in re.finditer(_QUOTED.format("text"), clause["clause"]):
            yield f"an output {quoted['text']!r}", float(clause["number"]) * scale, dataclasses.replace(SAMPLE_ITEM, output=quoted["text"])


def _setting_of(source: CatalogSource, definition: ScorerDefinition) -> tuple[str, Place | None]:
    """The one option the author wrote a text for (an extension's `pattern:`), else the
    first value of the author's own computed step, else the description."""
    own = source.scorers.get(definition.id)
    if not isinstance(own, Mapping):
        return "description", None
    options = own.get("options")
    options = options if isinstance(options, Mapping) else {}
    written = [
        name for name, value in options.items()
        if isinstance(value.get("default") if isinstance(value, Mapping) else value, str)
    ]
    if len(written) == 1:
        declared = options[written[0]]
        place = position(declared, ["default"], value=True) if isinstance(declared, Mapping) else position(options, [written[0]], value=True)
        return f"options.{written[0]}", place
    computed = next(own_values(own, "compute"), None)
    if computed is not None:
        step, name, _, place = computed
        return f"{step}.{name}", place
    return "description", position(own, ["description"], value=True)

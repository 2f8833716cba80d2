"""The ratings an author's option texts give against the range the judge is held to: the
evaluation steps say "give 5 when the issue is fully resolved" while `max_score` is 10, so
the judge's answer as the steps say sits mid-range and the best output fails. Named at the
bound's option and at the text giving the ratings, when the author's file writes each (either
may be the slip: a raised `max_score`, or steps left on the old scale).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from .source import Place, position
from .spec import ScorerDefinition

#: A rating given for a case: "5 when ...", "give 4 only if ...", "0 when no point is made".
_RATING_FOR_A_CASE = re.compile(r"(?<![\w.,/$%-])(\d{1,3})\s+(?:only\s+)?(?:when|if)\b", re.IGNORECASE)
#: A range given in words: "rate from 1 to 5", "on a 1-10 scale", "score it 0 to 4".
_RANGE_SAID = re.compile(r"\b(?:rat\w*|scor\w*|grad\w*|scale|marks?)\b\D{0,20}?\b(\d{1,3})\s*(?:to|-|–)\s*(\d{1,3})\b", re.IGNORECASE)
_OPTION = re.compile(r"options\.(\w+)")


def _ratings(text: str) -> list[int]:
    found = [int(number) for number in _RATING_FOR_A_CASE.findall(text)]
    for low, high in _RANGE_SAID.findall(text):
        found += [int(low), int(high)]
    return found


def _texts(own: Mapping[str, Any], skip: set[str]) -> Iterator[tuple[str, list[Any], str]]:
    """(option, path to the text inside own, text) of each text the author's options write."""
    options = own.get("options")
    for name, declared in options.items() if isinstance(options, Mapping) else ():
        if name in skip:
            continue
        at: list[Any] = [name, "default"] if isinstance(declared, Mapping) and "default" in declared else [name]
        value = declared.get("default") if isinstance(declared, Mapping) else declared
        if isinstance(value, str):
            yield str(name), ["options", *at], value
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, str):
                    yield str(name), ["options", *at, index], item


def ratings_against_range(definition: ScorerDefinition, own: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for each end of an answer field's range, bound by an option
    (`maximum: options.max_score`), that the ratings the author's option texts give (at least
    two, or a range) do not reach or pass."""
    if not isinstance(own, Mapping):
        return
    for step in definition.steps:
        bounds = getattr(step, "bounds", None)
        for field, bound in bounds.items() if isinstance(bounds, Mapping) else ():
            ends = {keyword: _OPTION.fullmatch(str(getattr(bound, keyword, None) or "")) for keyword in ("minimum", "maximum")}
            named = {keyword: match.group(1) for keyword, match in ends.items() if match is not None}
            if len(named) != 2:
                continue
            values = {keyword: _default(definition.options.get(option)) for keyword, option in named.items()}
            if not all(isinstance(value, int) for value in values.values()):
                continue
            given = [(option, at, text, _ratings(text)) for option, at, text in _texts(own, set(named.values()))]
            given = [entry for entry in given if entry[3]]
            every = sorted({rating for *_, ratings in given for rating in ratings})
            if len(every) < 2:
                continue
            low, high = values["minimum"], values["maximum"]
            for keyword, said, written in (("maximum", every[-1], high), ("minimum", every[0], low)):
                if said == written or keyword == "minimum" and said > written:
                    continue  # texts often leave the worst cases unrated ("2 or less when ..."): only a refused one counts
                option = named[keyword]
                text_option, text_at, text, _ = next(entry for entry in given if (max if keyword == "maximum" else min)(entry[3]) == said)
                end = "best" if keyword == "maximum" else "worst"
                inside = low <= said <= high
                what = (
                    f"an output the texts give their {end}, {said}, is scored as if it were not the {end}" if inside
                    else f"the judge may never give the texts' {end}, {said}, which the schema refuses"
                )
                options = own.get("options")
                declared = options.get(option) if isinstance(options, Mapping) else None
                if declared is not None:
                    yield "ratings-against-range", (
                        f"{label}.options.{option}: {written}, but `{text_option}` rates from {every[0]} to {every[-1]} ({_quoted(text)}): "
                        f"the judge is held to {low}..{high} for {field}, so {what}; write {option}: {said}, or the texts on the {low} to {high} range"
                    ), position(options, [option, "default"] if isinstance(declared, Mapping) else [option], value=True)
                yield "ratings-against-range", (
                    f"{label}.options.{text_option}: gives {said} for the {end} case, but {option} is {written} (the judge is held to "
                    f"{low}..{high} for {field}): {what}; write the ratings on that range, or {option}: {said}"
                ), position(own, text_at, value=True)
                break


def _default(declared: Any) -> Any:
    return declared.get("default") if isinstance(declared, Mapping) else declared


def _quoted(text: str) -> str:
    short = " ".join(text.split())
    return repr(short if len(short) <= 80 else short[:79] + "…")

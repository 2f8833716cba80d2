"""A judge-free scorer that looks for texts of a list option in the output, held to what its
description says of how many must be found: "at least one of our support channels" where
the score asks for every text (`all: true` kept from the base), or "every one of the
disclaimers" where one is enough. The scorer is run on an output holding only the first of
the texts and on one holding them all; the boolean option whose other value would make the
first score as described is named at its line (else the description is).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from ...errors import ConfigError
from ...scoring.plan import ScorerPlan
from ...scoring.preview import SAMPLE_ITEM
from ..source import CatalogSource, Place, position
from ..spec import ScorerDefinition
from ..warning import CatalogWarning
from .item_trials import option_defaults, own_values, run_items

#: Words of a description that ask for one of several texts, and for each of them.
_SOME = re.compile(r"\b(?:at least one|any one|any of|one or more|(?<!every )(?<!each )one of (?:our|the|these|its))\b", re.IGNORECASE)
_EVERY = re.compile(r"\b(?:every one of|each one of|all of the|each of the|every)\b", re.IGNORECASE)
#: Words that say no text may be found: such a scorer is another's to hold.
_NONE = re.compile(r"\b(?:none of|no one of|never)\b", re.IGNORECASE)


def quantifier_against_description(source: CatalogSource, definition: ScorerDefinition, plan: ScorerPlan) -> list[ConfigError]:
    """The warning of a texts-finding scorer whose score counts its texts otherwise than its
    description says (one is enough, or every one is needed)."""
    description = " ".join(definition.description.split())
    some, every = _SOME.search(description), _EVERY.search(description)
    if bool(some) == bool(every) or _NONE.search(description):
        return []
    defaults = option_defaults(plan)
    texts = [(name, value) for name, value in defaults.items() if isinstance(value, list) and len(value) > 1 and all(isinstance(text, str) and text for text in value)]
    found = plan.scores_range(defaults)
    if len(texts) != 1 or found is None:
        return []
    option, wanted = texts[0]
    best = found[1] if plan.direction == "higher_is_better" else found[0]
    one, whole = _score(plan, wanted[:1], {}), _score(plan, wanted, {})
    if whole != best or one is None or (one == best) == bool(some):
        return []
    flags = [name for name, value in defaults.items() if isinstance(value, bool) and (_score(plan, wanted[:1], {name: not value}) == best) == bool(some)]
    said = f"the description says {(some or every)[0]!r}, so {'one of the texts is enough' if some else 'every text is needed'}"  # type: ignore[index]
    scored = f"an output holding only {wanted[0]!r} of `{option}` scores {one:g}, {'not the best' if some else 'the best'}"
    own = source.scorers.get(definition.id)
    if flags:
        flag = flags[0]
        place = position(own, ["options", flag], value=True) or position(own, ["description"], value=True) if isinstance(own, Mapping) else None
        message = (f"{definition.id}.options.{flag}: {said}, but with `{flag}: {_yaml(defaults[flag])}` "
                   f"{scored}; write `{flag}: {_yaml(not defaults[flag])}`, or say in the description what it counts")
    else:
        place = position(own, ["description"], value=True) if isinstance(own, Mapping) else None
        message = f"{definition.id}.description: {said}, but {scored}; say what the score counts"
    file, line, column = place or (str(source.path), None, None)
    return [CatalogWarning(message, file, line, column, code="count-against-description")]


def _score(plan: ScorerPlan, texts: list[str], options: Mapping[str, Any]) -> float | None:
    """The score of an output that holds `texts`, with `options` changed."""
    output = f"{SAMPLE_ITEM.output} " + " ".join(f"{text}." for text in texts)
    trials = run_items(plan, {"texts": dataclasses.replace(SAMPLE_ITEM, output=output)}, options)
    return trials[0].score if trials else None


def _yaml(value: bool) -> str:
    return "true" if value else "false"


def case_against_texts(source: CatalogSource, definition: ScorerDefinition, plan: ScorerPlan) -> list[ConfigError]:
    """The warning at a yes-or-no option that makes a texts-finding scorer tell upper from lower
    case while every one of its texts is written in lower case: an output that writes the first
    of them at a sentence's start ("Damn") is not found, where the lower-case one is."""
    defaults = option_defaults(plan)
    texts = [value for value in defaults.values() if isinstance(value, list) and value and all(isinstance(text, str) and text for text in value)]
    if len(texts) != 1 or any(text != text.lower() for text in texts[0]) or texts[0][0].capitalize() == texts[0][0]:
        return []
    lower, capital = texts[0][0], texts[0][0].capitalize()
    found, written = _score(plan, [lower], {}), _score(plan, [capital], {})
    if found is None or written is None or found == written:
        return []
    flags = [name for name, value in defaults.items() if isinstance(value, bool) and _score(plan, [capital], {name: not value}) == found]
    own = source.scorers.get(definition.id)
    if not flags or not isinstance(own, Mapping):
        return []
    flag = flags[0]
    place = position(own, ["options", flag], value=True)
    file, line, column = place or (str(source.path), None, None)
    return [CatalogWarning(
        f"{definition.id}.options.{flag}: with `{flag}: {_yaml(defaults[flag])}` the texts are told apart by case, but every one of them is "
        f"written in lower case: an output that writes {capital!r} (at a sentence's start) scores {written:g}, where {lower!r} scores {found:g}; "
        f"write `{flag}: {_yaml(not defaults[flag])}`, or write each text as outputs write it",
        file, line, column, code="case-against-texts",
    )]


def texts_never_found(source: CatalogSource, definition: ScorerDefinition, plan: ScorerPlan) -> list[ConfigError]:
    """The warning of a texts-finding scorer one of whose texts is never found: an output that
    holds it as written scores as one holding none, and one holding every text scores as one
    holding every other (a text with capitals looked for in an output turned to lower case)."""
    defaults = option_defaults(plan)
    texts = [(name, value) for name, value in defaults.items() if isinstance(value, list) and len(value) > 1 and all(isinstance(text, str) and text for text in value)]
    if len(texts) != 1:
        return []
    option, wanted = texts[0]
    none, every = _score(plan, [], {}), _score(plan, wanted, {})
    if none is None or every is None or none == every:
        return []
    for text in wanted[:_MOST_TEXTS_TRIED]:
        globbed = _globbed(plan, text, none)
        if globbed is not None:
            return [_at_option(source, definition, option, globbed, wanted.index(text))]
        alone, without = _score(plan, [text], {}), _score(plan, [other for other in wanted if other != text], {})
        if alone != none or without != every:
            continue
        return [_at_option(source, definition, option, (
            f"{text!r} is never found: an output holding it as written scores {alone:g}, as one holding none of the texts, and one holding "
            f"every text scores {every:g} with it or without it; is the output turned to lower case and not the texts, or the text written "
            "otherwise than outputs write it?"
        ))]
    return []


def _globbed(plan: ScorerPlan, text: str, none: float) -> str | None:
    """Why a text written as a glob (`*@internal.example.com`) is never found, if it is one:
    texts are found as written, so an output holding what the `*` stands for scores as one
    holding none of them."""
    if "*" not in text or not text.strip("*"):
        return None
    filled = text.replace("*", "jane.doe")
    if _score(plan, [filled], {}) != none or _score(plan, [text], {}) == none:
        return None
    return (
        f"{text!r} is found as written, `*` and all: an output holding {filled!r} scores {none:g}, as one holding none of the texts; texts "
        f"are plain text, not globs: write the part every match shares ({text.strip('*')!r}), or a pattern"
    )


def _at_option(source: CatalogSource, definition: ScorerDefinition, option: str, said: str, entry: int | None = None) -> ConfigError:
    """The warning at the option's entry `entry` when the author wrote it, else at the value of
    theirs that reads the option, else at the option."""
    own = source.scorers.get(definition.id)
    options = own.get("options") if isinstance(own, Mapping) else None
    declared = options.get(option) if isinstance(options, Mapping) else None
    written = [option, "default", entry] if isinstance(declared, Mapping) else [option, entry]
    place = position(options, written, value=True) if entry is not None and declared is not None else None
    place = place or _reader_of_option(own, option) or (position(own, ["options", option], value=True) if isinstance(own, Mapping) else None)
    file, line, column = place or (str(source.path), None, None)
    return CatalogWarning(f"{definition.id}.options.{option}: {said}", file, line, column, code="text-never-found")


#: The texts of an option tried one by one, to keep `check` quick.
_MOST_TEXTS_TRIED = 6


def _reader_of_option(own: Any, option: str) -> Place | None:
    """Where the one computed value of the author's that reads the option is written."""
    found = [place for _, _, written, place in own_values(own) if re.search(rf"\boptions\.{re.escape(option)}\b", written)]
    return found[0] if len(found) == 1 else None

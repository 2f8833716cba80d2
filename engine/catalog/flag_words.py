"""A true-or-false option set against what the author's own words say of it: `exclusive:
false` under a description saying "a call to any tool that was not expected counts against
the score", which is the option's own description of `true`. The sentence of the comment (or
of the scorer's description) that says most of what the option's declaration says is read
as saying it (true) or its negation (false), by the negations each holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from .source import Place, position

#: Words that turn a sentence round; "only" and "unless" are left out: they narrow, not deny.
_NEGATIONS = frozenset("not no never none nothing without isn't aren't doesn't don't cannot can't won't neither nor".split())
#: Words too common to tie a sentence to an option's description.
_COMMON = frozenset(
    "the and for that this with from are was were its it's their them they one any each every when whether what which who "
    "into onto than then there here has have had been being also only more most less such so as at by of on or in to is be an "
    "a if but can may must should would could will".split()
)


def _stems(text: str) -> set[str]:
    return {re.sub(r"(?:ing|ed|es|s)$", "", word) for word in re.findall(r"[a-z]+", text.lower()) if word not in _COMMON and word not in _NEGATIONS and len(word) > 2}


def _negations(text: str) -> int:
    return sum(1 for word in re.findall(r"[a-z']+", text.lower()) if word in _NEGATIONS or word.endswith("n't"))


def _sentences(text: str) -> list[str]:
    return [part.strip() for part in re.split(r"(?<=[.;:!?])\s+|\s+-\s+", " ".join(text.split())) if part.strip()]


def flags_against_words(own: Any, base: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for each true-or-false option of the author's whose comment, or
    else the scorer's own description, has a sentence saying most of what the option's
    declaration says its `true` does, said the other way from the value written."""
    from .setting_checks import comment_at

    options = own.get("options") if isinstance(own, Mapping) else None
    declared = base.get("options") if isinstance(base, Mapping) else None
    if not isinstance(options, Mapping) or not isinstance(declared, Mapping):
        return
    for name, written in options.items():
        declaration = declared.get(name)
        value = written.get("default") if isinstance(written, Mapping) else written
        described = str(declaration.get("description") or "") if isinstance(declaration, Mapping) and declaration.get("type") == "boolean" else ""
        meant = re.split(r"\s*\(", described, maxsplit=1)[0]  # a bracketed aside tells of `false`
        wanted = _stems(meant)
        if not isinstance(value, bool) or len(wanted) < 3:
            continue
        comment = comment_at(options, name)
        text = comment or str(own.get("description") or "")
        best = max(_sentences(text), key=lambda sentence: len(_stems(sentence) & wanted), default="")
        shared = _stems(best) & wanted
        if len(shared) < max(3, (len(wanted) + 1) // 2):
            continue
        says = _negations(best) % 2 == _negations(meant) % 2
        if says == value:
            continue
        where = "its comment" if comment else "the scorer's description"
        yield "flag-against-words", (
            f"{label}.options.{name}: {str(value).lower()}, but {where} says {'what' if says else 'the opposite of what'} `{name}: true` does "
            f"({best!r}; the option: {meant.strip()!r}): write `{name}: {str(says).lower()}`, or the words the value means"
        ), position(options, [name, "default"] if isinstance(written, Mapping) else [name], value=True)

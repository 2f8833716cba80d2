"""What a text says a value of a verdict means: a prompt's `- "yes": the context supports it`,
a heading's `A claim IS a hallucination (verdict "yes") when:`, a queue's instructions `Mark
each claim "yes" when it is made up`, or a template's `{% for v in verdicts if v.verdict ==
'no' %}` under the line `The claims judged to be hallucinations:`. Each is read as good or
bad by the words tied to the value (meanings.py's table, a negation turning them round), to be
held against the meaning the answer schema declares for that value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from .meanings import Meaning, Polarity, polarity_of_words

#: A quoted value, then (after an optional "(label)") a word tying words to it: anywhere in a
#: line by a word (`"yes" when ...`, `"yes" marks ...`), by a sign only where a line starts with
#: the value, as a definition does (`- "no": ...`, `"yes" (supported): ...`), since elsewhere
#: `decide "yes": ...` goes on with something else.
_VALUE_THEN_WORDS = re.compile(
    r"(?:(?P<start>^\s*(?:[-*•]|\d+[.)])?\s*)|)(?P<quote>[\"'`])(?P<value>[^\"'`\n]{1,30})(?P=quote)\s*(?:\((?P<label>[^()\n]{1,40})\)\s*)?"
    r"(?:,\s*(?=(?:when|if|wenn|falls|si|cuando|quand|quando|se)\b))?(?:(?:when|if|means|meaning|marks|stands\s+for|wenn|falls|si|cuando|quand|quando|se|bedeutet|signifie|significa)\b|(?(start)(?:[:=]|\s[-–—])|(?!)))\s*(?P<words>[^\"'`\n]*)",
    re.IGNORECASE | re.MULTILINE,
)
#: Words, then the value in brackets closing them: `A claim IS a hallucination (verdict "yes")`.
_WORDS_THEN_VALUE = re.compile(r"(?P<words>[^\"'`()\n.;:!?]{3,}?)\(\s*(?:[\w-]+\s+){0,2}(?P<quote>[\"'`])(?P<value>[^\"'`\n]{1,30})(?P=quote)\s*\)")
#: A comparison of a field with a text in a template tag: `v.verdict == 'no'`, `verdict != "yes"`.
_COMPARED = re.compile(r"(?:\b\w+\.)?\b(?P<field>\w+)\s*(?P<operator>==|!=)\s*(?P<quote>[\"'])(?P<value>[^\"'\n]{1,30})(?P=quote)")
#: A test of a yes-or-no field's truth closing a tag: `if v.answered`, `if not q.answered`.
_TESTED = re.compile(r"\bif\s+(?P<negated>not\s+)?(?:\w+\.)+(?P<field>\w+)\s*-?%}")
_TAG = re.compile(r"{%-?\s*(?P<keyword>for|if|elif)\b.*?-?%}")
_JINJA = re.compile(r"{[{%#].*?[}%#]}")


@dataclass(frozen=True)
class Saying:
    """A value (`value`), the words a text ties to it and the polarity they read as; `offset`
    is where the value is written in the text."""

    value: str
    words: str
    polarity: Polarity
    offset: int


def plain_text(text: str) -> str:
    """The text with its Jinja tags blanked out, each character where it was."""
    return _JINJA.sub(lambda found: " " * len(found.group()), text)


def sayings(text: str) -> Iterator[Saying]:
    """Each value the text ties to words that read good or bad (Jinja tags aside)."""
    plain = plain_text(text)
    for pattern in (_VALUE_THEN_WORDS, _WORDS_THEN_VALUE):
        for found in pattern.finditer(plain):
            words = re.split(r"[.;!?](?:\s|$)", found["words"])[-1 if pattern is _WORDS_THEN_VALUE else 0]
            words = f"{found['label']}: {words}" if pattern is _VALUE_THEN_WORDS and found["label"] else words
            polarity = polarity_of_words(words)
            if polarity in ("good", "bad"):
                yield Saying(found["value"], re.sub(r"[\s,:-]+(?:and|or)?[\s,]*$", "", words.strip()), polarity, found.start("value"))


def filtered_sayings(lines: list[str]) -> Iterator[tuple[int, str, str, Saying]]:
    """Each template tag that keeps the answers whose field equals a value (`for v in verdicts
    if v.verdict == 'no'`, `if v.verdict != 'yes'`) under a heading that says what it lists:
    (line index, field, the value kept or left out, the heading's saying, its polarity turned
    round for `!=`). The heading is the words on the tag's line, else the line above it when
    that ends with a colon; a line comparing more than once is passed over."""
    for index, line in enumerate(lines):
        tags = [(tag, compared) for tag in _TAG.finditer(line) if (compared := _COMPARED.search(tag.group()) or _TESTED.search(tag.group())) is not None]
        if len(tags) != 1:
            continue  # words beside several comparisons may belong to any of them
        for tag, compared in tags:
            around = _JINJA.sub(" ", line).strip()
            above = next((lines[before].strip() for before in range(index - 1, -1, -1) if lines[before].strip()), "")
            # An `elif` follows the branch above it, not a heading.
            heading = around or (_JINJA.sub(" ", above).strip() if above.endswith(":") and tag["keyword"] != "elif" else "")
            polarity = polarity_of_words(heading) if heading else None
            if polarity not in ("good", "bad"):
                continue
            if "negated" in compared.groupdict():
                # A truth test keeps the answers whose field is true (false under `not`).
                value, at = ("false" if compared["negated"] else "true"), compared.start("field")
            else:
                value, at = compared["value"], compared.start("value")
                if compared["operator"] == "!=":
                    polarity = "bad" if polarity == "good" else "good"
            yield index, compared["field"], value, Saying(value, heading, polarity, tag.start() + at)


def fields_named(meanings: Mapping[str, Meaning], field: str) -> list[str]:
    """The choice fields (`analyze.verdicts[].verdict`) whose last name is `field`."""
    return [name for name in meanings if re.split(r"[.\[\]]+", name.rstrip("[]"))[-1] == field]


def value_polarities(meanings: Mapping[str, Meaning], field: str | None = None, truths: bool = False) -> dict[str, str]:
    """Each text value of the choice fields (those whose last name is `field`, when given)
    that means good or bad, when every such field holding it gives it the same meaning; with
    `truths`, a yes-or-no field's true and false too, as "true" and "false"."""
    found: dict[str, str] = {}
    clashing: set[str] = set()
    for name, meaning in meanings.items():
        if field is not None and name not in fields_named(meanings, field):
            continue
        for value, polarity in (meaning.polarities or {}).items():
            if truths and isinstance(value, bool):
                value = "true" if value else "false"
            if not isinstance(value, str) or polarity not in ("good", "bad"):
                continue
            if found.setdefault(value, polarity) != polarity:
                clashing.add(value)
    return {value: polarity for value, polarity in found.items() if value not in clashing}


#: Words that say nothing of which value is meant, and the names of the text judged against.
_FILLER = frozenset("a an the it its it's is are be that this when if or and of to by in on as any claim statement passage passages context guideline guidelines source sources document documents text record policy".split())
_NEGATION = frozenset("no not never none nothing neither nor without doesn't does don't isn't".split())


def _gist(words: str) -> tuple[frozenset[str], bool]:
    """The content words of a value's definition, cut to their stems, and whether it is negated."""
    tokens = re.findall(r"[a-z']+", words.lower())
    stems = frozenset(re.sub(r"(?:ing|ed|es|s)$", "", token) for token in tokens if token not in _FILLER and token not in _NEGATION and len(token) > 2)
    return stems, any(token in _NEGATION for token in tokens)


def _likeness(one: tuple[frozenset[str], bool], other: tuple[frozenset[str], bool]) -> float:
    shared = len(one[0] & other[0])
    return shared / max(1, min(len(one[0]), len(other[0]))) if shared else 0.0


def definitions(text: str) -> dict[str, tuple[str, int]]:
    """Each value a text defines (`"no" when no passage mentions it`), with its words and where
    the value is written, whatever the words say (the first definition of each value)."""
    found: dict[str, tuple[str, int]] = {}
    for definition in _VALUE_THEN_WORDS.finditer(plain_text(text)):
        words = re.split(r"[.;!?,](?:\s|$)", definition["words"])[0].strip()
        if words:
            found.setdefault(definition["value"], (words, definition.start("value")))
    return found


def swapped_definitions(text: str, clauses: Mapping[object, str]) -> tuple[str, str] | None:
    """Two values a text defines each in the words the schema's description gives the other
    ("no" when nothing mentions it, "unsure" when it is contradicted, where the schema says the
    reverse): the pair, first as the text writes them; None when none is so."""
    written = definitions(text)
    values = [value for value in written if value in clauses]
    for index, first in enumerate(values):
        for second in values[index + 1:]:
            mine = {value: _gist(written[value][0]) for value in (first, second)}
            theirs = {value: _gist(str(clauses[value])) for value in (first, second)}
            crossed = min(_likeness(mine[first], theirs[second]), _likeness(mine[second], theirs[first]))
            kept = max(_likeness(mine[first], theirs[first]), _likeness(mine[second], theirs[second]))
            if crossed >= 0.5 and kept == 0:
                return first, second
    return None

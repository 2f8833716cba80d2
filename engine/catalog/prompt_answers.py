"""What a prompt tells the judge to write, against what the step's answer schema accepts:
the keys of a JSON example (`"verdcit": "yes"` where the schema has `verdict`), the value
words it shows (`"verdict": "Yes"` where the enum is "yes" and "no"), and the words an
instruction on a line naming a field offers (`answer "yes", "no" or "unsure"`) or a list
explaining the values lists (`- "partly": ...` where the enum says "partial"). Only the
template's own text is read (Jinja's TemplateData: never what a run brings), in the
templates of the catalog's own prompt folder, each warning at its line.

Only shapes that are plainly meant as the answer are read, to stay quiet elsewhere: a JSON
key followed by a JSON value, quoted words on a line that names a field with an enum and
quotes at least one of its values, and a run of `- "word": ...` lines most of whose words
are values of one enum.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from jinja2 import TemplateSyntaxError, nodes

from ..errors import ConfigError
from .schema_limits import subschemas
from .suggest import did_you_mean
from .templates import PromptTemplates, sandbox
from .warning import CatalogWarning

#: `"key": value` where value is JSON: a string, a list or an object opening, a number, true, false or null, then the end of it.
_JSON_PAIR = re.compile(
    r'"(?P<key>[A-Za-z_][\w-]*)"\s*:\s*(?:"(?P<text>[^"\n]*)"(?=\s*(?:[,}\]]|$))|[\[{]|(?:-?\d+(?:\.\d+)?|true|false|null)(?=\s*(?:[,}\]]|$)))',
    re.MULTILINE,
)
_QUOTED_WORD = re.compile(r'(?<![\w"])["\'](?P<word>[\w-]+)["\'](?![\w"])')
_WORD = re.compile(r"^[\w-]+$")
#: A list explaining each value: `- "yes": when ...`, one a line.
_LISTED = re.compile(r'^[ \t]*[-*][ \t]*["\'](?P<word>[\w-]+)["\'][ \t]*:', re.MULTILINE)


class AnswerFields(NamedTuple):
    """The fields an answer schema file names (at any depth) and the values of those with a
    string enum."""

    names: frozenset[str]
    enums: tuple[tuple[str, tuple[str, ...]], ...]
    #: A field with an enum, named as a word.
    named: re.Pattern[str] | None
    #: The numeric fields with both a minimum and a maximum: (name, minimum, maximum).
    ranges: tuple[tuple[str, float, float], ...] = ()
    #: Each field's description, where it has one.
    descriptions: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, schema: Any) -> AnswerFields:
        names: set[str] = set()
        enums: dict[str, tuple[str, ...]] = {}
        ranges: dict[str, tuple[float, float]] = {}
        descriptions: dict[str, str] = {}
        for path, node in subschemas(schema, []):
            if not path:
                continue
            name = path.rsplit(".", 1)[-1]
            names.add(name)
            if isinstance(node, Mapping) and isinstance(node.get("description"), str):
                descriptions.setdefault(name, node["description"])
            values = node.get("enum") if isinstance(node, Mapping) else None
            if isinstance(values, list) and values and all(isinstance(value, str) for value in values):
                enums[name] = tuple(values)
            low, high = (node.get(key) if isinstance(node, Mapping) else None for key in ("minimum", "maximum"))
            if all(isinstance(end, (int, float)) and not isinstance(end, bool) for end in (low, high)):
                ranges[name] = (float(low), float(high))  # type: ignore[arg-type]
        named = re.compile(rf"(?<![\w-])({'|'.join(re.escape(name) for name in enums)})(?![\w-])") if enums else None
        return cls(frozenset(names), tuple(sorted(enums.items())), named, tuple(sorted((name, *ends) for name, ends in ranges.items())), tuple(sorted(descriptions.items())))


def prompt_asks(
    templates: PromptTemplates, own_folder: Path, names: list[str], schema: Any, schema_name: str, label: str
) -> Iterator[ConfigError]:
    """The warnings of the templates `names` reach (those of `own_folder`) against `schema`."""
    fields = AnswerFields.of(schema)
    if not fields.names:
        return
    try:
        reached = [reached for name in names for reached in templates.referenced(name)]
    except (ConfigError, TemplateSyntaxError):
        return  # reported by the compiler
    for name in dict.fromkeys(reached):
        path, text = templates.source(name)
        if not path.resolve().is_relative_to(own_folder.resolve()):
            continue
        for number, column, message, code in _asked_in(text, fields, schema_name):
            yield CatalogWarning(f"{label}: {message}", str(path), number, column, code=code)


@functools.cache
def _environment() -> Any:
    return sandbox()  # the one sandbox's syntax: its trees are shared with the compiler's


@functools.lru_cache(maxsize=1024)  # a partial is included by many steps answering with one schema
def _asked_in(text: str, fields: AnswerFields, schema_name: str) -> tuple[tuple[int, int, str, str], ...]:
    """(line, column, message, code) of what a template's own text asks that the schema refuses."""
    if '"' not in text and "'" not in text and not fields.ranges:
        return ()
    try:
        parsed = _environment().parse(text)
    except TemplateSyntaxError:
        return ()
    lines = text.splitlines()
    found = []
    for data in parsed.find_all(nodes.TemplateData):
        for line, column, message, code in _read(data.data, fields, schema_name):
            number = data.lineno + line
            found.append((number, column + 1 + (_column_of(lines, number, data.data) if line == 0 else 0), message, code))
    return tuple(found)


def _column_of(lines: list[str], number: int, data: str) -> int:
    """Where a piece of template text starts on its first line (after a tag that ends there)."""
    first = data.split("\n", 1)[0]
    if 1 <= number <= len(lines) and first:
        found = lines[number - 1].rfind(first)
        return max(found, 0)
    return 0


_NOT = frozenset("not no never without none un".split())


def _negated_stems(text: str) -> tuple[set[str], set[str]]:
    """The stems of a definition's words, and those of them a negation just before turns round."""
    words = re.findall(r"[a-z']+", text.lower())
    stems = [re.sub(r"(?:ing|ed|es|s)$", "", word) for word in words]
    negated = {stem for index, stem in enumerate(stems) if set(words[max(0, index - 2):index]) & _NOT}
    return {stem for stem, word in zip(stems, words) if len(word) > 3 and word not in _NOT}, negated


def _complements_asked(text: str, fields: AnswerFields, schema: str) -> Iterator[tuple[int, int, str, str]]:
    """A prompt defining a field as the complement of what its schema's description says: the
    description counts "how many of the agent's calls were needed" and the prompt asks for
    "the number of calls that were not needed": the score reads the one as the other."""
    for name, described in fields.descriptions:
        for found in re.finditer(rf"[\"'`]{re.escape(name)}[\"'`]\s*[,:(]\s*(?P<clause>[^;.()\n]{{8,}})", text):
            clause = re.split(r",\s*(?:a|an|from|then|one)\b", found["clause"])[0]
            if re.match(r"\s*(?:then|and|or|followed|after|before|next)\b", clause):
                continue  # the next thing asked, not what the field is
            mine, mine_negated = _negated_stems(clause)
            theirs, theirs_negated = _negated_stems(described)
            turned = sorted((mine & theirs) & (mine_negated ^ theirs_negated) - _negated_stems(name.replace("_", " "))[0])
            if len(mine & theirs) >= 2 and turned:
                line, column = _where(text, found.start())
                yield line, column, (
                    f"the prompt asks for {name} as {clause.strip()!r}, but {schema} describes it as {described.strip()!r}: one of them "
                    f"turns {turned[0]!r} round, so the judge answers the complement of what the score reads; make the two say the same"
                ), "field-asked-as-complement"
                break


def _read(text: str, fields: AnswerFields, schema: str) -> Iterator[tuple[int, int, str, str]]:
    """(line offset, column, message, code) of what `text` asks that the schema refuses."""
    yield from _complements_asked(text, fields, schema)
    pairs = list(_JSON_PAIR.finditer(text))
    known = [pair for pair in pairs if pair["key"] in fields.names]
    for pair in pairs:
        key, value = pair["key"], pair["text"]
        line, column = _where(text, pair.start())
        if key not in fields.names:
            hint = did_you_mean(key, sorted(fields.names))
            if hint or known:
                yield line, column, (
                    f"the prompt shows the key {key!r} in a JSON example, but the answer schema {schema} has no field {key!r}{hint} "
                    f"(its fields: {', '.join(sorted(fields.names))}): the judge is told to write what its answer cannot hold"
                ), "prompt-key"
        elif value is not None and key in dict(fields.enums) and _WORD.match(value) and value not in dict(fields.enums)[key]:
            line, column = _where(text, pair.start("text") - 1)
            yield line, column, _not_a_value(f'"{key}": "{value}" in a JSON example', key, value, dict(fields.enums)[key], schema), "prompt-value"
    offset = 0
    reported: set[int] = set()
    enums = dict(fields.enums)
    for number, line_text in enumerate(text.split("\n")):
        named = fields.named.findall(line_text) if fields.named is not None and ('"' in line_text or "'" in line_text) else []
        for field in dict.fromkeys(named):
            values = enums[field]
            quoted = [found for found in _QUOTED_WORD.finditer(line_text) if found["word"] not in fields.names]
            folded = {value.casefold() for value in values}
            if not any(found["word"].casefold() in folded for found in quoted):
                continue
            for found in quoted:
                word = found["word"]
                if word in values or any(pair.start() <= offset + found.start() < pair.end() for pair in pairs):
                    continue
                reported.add(offset + found.start())
                yield number, found.start(), _not_a_value(f'"{word}" on a line about {field}', field, word, values, schema), "prompt-value"
        offset += len(line_text) + 1
    # A line that names two or more of the schema's fields in quotes ("statement", "reason")
    # is about the answer's keys: another quoted word there is a key the schema lacks.
    offset = 0
    every_value = {value for _, values in fields.enums for value in values}
    for number, line_text in enumerate(text.split("\n")):
        quoted = list(_QUOTED_WORD.finditer(line_text))
        if sum(found["word"] in fields.names for found in quoted) >= 2:
            for found in quoted:
                word = found["word"]
                inside_pair = any(pair.start() <= offset + found.start() < pair.end() for pair in pairs)
                if word in fields.names or word in every_value or inside_pair or offset + found.start() in reported or not word.islower():
                    continue
                yield number, found.start(), (
                    f"the prompt asks for \"{word}\" beside the answer's own keys on this line, but the answer schema {schema} has no field "
                    f"{word!r}{did_you_mean(word, sorted(fields.names))} (its fields: {', '.join(sorted(fields.names))}): the judge is told to write what its answer cannot hold"
                ), "prompt-key"
        offset += len(line_text) + 1
    yield from _ranges_asked(text, fields, schema)
    for group in _lists(text, fields):
        field, values = max(fields.enums, key=lambda enum: sum(found["word"].casefold() in {value.casefold() for value in enum[1]} for found in group))
        folded = {value.casefold() for value in values}
        if 2 * sum(found["word"].casefold() in folded for found in group) < len(group):
            continue  # a list of something else
        for found in group:
            word = found["word"]
            if word not in values and found.start("word") - 1 not in reported:
                line, column = _where(text, found.start("word") - 1)
                yield line, column, _not_a_value(f'"{word}" in a list of the values of {field}', field, word, values, schema), "prompt-value"


#: A range of numbers as a prompt gives one: "from 1 (rude) to 10", "between 0 and 100", "1-5".
_NUMBER = r"-?\d+(?:\.\d+)?"
RANGE_SAID = re.compile(
    rf"\bfrom\s+(?P<from>{_NUMBER})(?:\s*\([^)\n]*\))?\s+to\s+(?P<to>{_NUMBER})(?!\d|\.\d)"
    rf"|\bbetween\s+(?P<between>{_NUMBER})(?:\s*\([^)\n]*\))?\s+and\s+(?P<and>{_NUMBER})(?!\d|\.\d)"
    r"|(?<![\w.-])(?P<low>\d+(?:\.\d+)?)\s*[-\u2013]\s*(?P<high>\d+(?:\.\d+)?)(?!\w|\.\d|-\d)",
    re.IGNORECASE,
)
#: Words that say a line is about a rating, when it names no field.
_RATING_WORDS = re.compile(r"\b(?:rat(?:e|ing)|score|scale|grade)s?\b", re.IGNORECASE)


def _ranges_asked(text: str, fields: AnswerFields, schema: str) -> Iterator[tuple[int, int, str, str]]:
    """A range of numbers on a line naming a numeric field of the schema (or, for the one
    such field, a rating word) that reaches past the field's minimum or maximum: the judge
    is told to give answers its schema refuses (a rating "from 1 to 10" where it allows 1 to
    5). A range inside the field's (a band of a rubric: "4-5: polite") is not one."""
    for number, line_text in enumerate(text.split("\n")):
        named = [field for field in fields.ranges if re.search(rf"(?<![\w-]){re.escape(field[0])}(?![\w-])", line_text)]
        if not named and len(fields.ranges) == 1 and _RATING_WORDS.search(line_text):
            named = list(fields.ranges)
        if len(named) != 1:
            continue
        field, least, most = named[0]
        for found in RANGE_SAID.finditer(line_text):
            low, high = (float(end) for end in [value for value in found.groups() if value is not None])
            asked = line_text[found.start() : found.end()]
            if low >= high:
                continue
            if least <= low and high <= most:
                # A range told as the whole scale ("from 1 to 5", not a band "4-5: polite") that
                # is a good part of the field's, short of it: the judge never answers the rest.
                if found["low"] is not None or (low, high) == (least, most) or high - low < (most - least) / 3:
                    continue
                yield number, found.start(), (
                    f"the prompt asks for {field} {asked!r}, but {field} in {schema} runs from {least:g} to {most:g} (its minimum and maximum): "
                    f"the judge answers only from {low:g} to {high:g}, so a score written for {least:g} to {most:g} never reaches its ends; "
                    f"give the schema's range in the prompt, or narrow the schema's"
                ), "prompt-range"
                continue
            past = f"above {most:g}" if high > most else f"below {least:g}"
            yield number, found.start(), (
                f"the prompt asks for {field} {asked!r}, but {field} in {schema} runs from {least:g} to {most:g} (its minimum and maximum): "
                f"the judge's answers {past} are refused; give the schema's range in the prompt, or widen the schema's"
            ), "prompt-range"


def _lists(text: str, fields: AnswerFields) -> Iterator[list[re.Match[str]]]:
    """The runs of `- "word": ...` lines of a text (a blank line ends one), field names aside."""
    if not fields.enums:
        return
    group: list[re.Match[str]] = []
    for found in _LISTED.finditer(text):
        if found["word"] in fields.names:
            continue
        if group and "\n\n" in text[group[-1].end() : found.start()]:
            yield group
            group = []
        group.append(found)
    if group:
        yield group


def _not_a_value(shown: str, field: str, word: str, values: tuple[str, ...], schema: str) -> str:
    case = next((value for value in values if value.casefold() == word.casefold()), None)
    why = f"the answer must be written {case!r}: the case counts" if case else f"{word!r} is none of them{did_you_mean(word, values)}"
    return f"the prompt shows {shown}, but {field} in {schema} is one of {', '.join(map(repr, values))}: {why}; ask for the schema's own values"


def _where(text: str, index: int) -> tuple[int, int]:
    before = text[:index]
    return before.count("\n"), index - (before.rfind("\n") + 1)

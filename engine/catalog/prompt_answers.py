"""What a prompt tells the judge to write, against what the step's answer schema accepts:
the keys of a JSON example (`"verdcit": "yes"` where the schema has `verdict`), the value
words it shows (`"verdict": "Yes"` where the enum is "yes" and "no"), and the words an
instruction on a line naming a field offers (`answer "yes", "no" or "unsure"`). Only the
template's own text is read (Jinja's TemplateData: never what a run brings), in the
templates of the catalog's own prompt folder, each warning at its line.

Only shapes that are plainly meant as the answer are read, to stay quiet elsewhere: a JSON
key followed by a JSON value, and quoted words on a line that names a field with an enum
and quotes at least one of its values.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from jinja2 import TemplateSyntaxError, nodes

from ..errors import ConfigError
from .schema_limits import subschemas
from .suggest import did_you_mean
from .templates import PromptTemplates
from .warning import CatalogWarning

#: `"key": value` where value is JSON: a string, a list or an object opening, a number, true, false or null, then the end of it.
_JSON_PAIR = re.compile(
    r'"(?P<key>[A-Za-z_][\w-]*)"\s*:\s*(?:"(?P<text>[^"\n]*)"|[\[{]|-?\d+(?:\.\d+)?|true|false|null)(?=\s*(?:[,}\]]|$|[\[{]))', re.MULTILINE
)
_QUOTED_WORD = re.compile(r'(?<![\w"])["\'](?P<word>[\w-]+)["\'](?![\w"])')
_WORD = re.compile(r"^[\w-]+$")


class AnswerFields:
    """The fields an answer schema file names (at any depth) and the values of those with a
    string enum."""

    def __init__(self, schema: Any) -> None:
        self.names: set[str] = set()
        self.enums: dict[str, list[str]] = {}
        for path, node in subschemas(schema, []):
            if not path:
                continue
            name = path.rsplit(".", 1)[-1]
            self.names.add(name)
            values = node.get("enum") if isinstance(node, Mapping) else None
            if isinstance(values, list) and values and all(isinstance(value, str) for value in values):
                self.enums[name] = list(values)


def prompt_asks(
    templates: PromptTemplates, own_folder: Path, names: list[str], schema: Any, schema_name: str, label: str
) -> Iterator[ConfigError]:
    """The warnings of the templates `names` reach (those of `own_folder`) against `schema`."""
    fields = AnswerFields(schema)
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
        try:
            parsed = templates.environment.parse(text)
        except TemplateSyntaxError:
            continue
        lines = text.splitlines()
        for data in parsed.find_all(nodes.TemplateData):
            for line, column, message, code in _read(data.data, fields, schema_name):
                number = data.lineno + line
                place_column = column + 1 + (_column_of(lines, number, data.data) if line == 0 else 0)
                yield CatalogWarning(f"{label}: {message}", str(path), number, place_column, code=code)


def _column_of(lines: list[str], number: int, data: str) -> int:
    """Where a piece of template text starts on its first line (after a tag that ends there)."""
    first = data.split("\n", 1)[0]
    if 1 <= number <= len(lines) and first:
        found = lines[number - 1].rfind(first)
        return max(found, 0)
    return 0


def _read(text: str, fields: AnswerFields, schema: str) -> Iterator[tuple[int, int, str, str]]:
    """(line offset, column, message, code) of what `text` asks that the schema refuses."""
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
        elif value is not None and key in fields.enums and _WORD.match(value) and value not in fields.enums[key]:
            line, column = _where(text, pair.start("text") - 1)
            yield line, column, _not_a_value(f'"{key}": "{value}" in a JSON example', key, value, fields.enums[key], schema), "prompt-value"
    offset = 0
    for number, line_text in enumerate(text.split("\n")):
        for field, values in fields.enums.items():
            if not re.search(rf"(?<![\w-]){re.escape(field)}(?![\w-])", line_text):
                continue
            quoted = [found for found in _QUOTED_WORD.finditer(line_text) if found["word"] not in fields.names]
            folded = {value.casefold() for value in values}
            if not any(found["word"].casefold() in folded for found in quoted):
                continue
            for found in quoted:
                word = found["word"]
                if word in values or any(pair.start() <= offset + found.start() < pair.end() for pair in pairs):
                    continue
                yield number, found.start(), _not_a_value(f'"{word}" on a line about {field}', field, word, values, schema), "prompt-value"
        offset += len(line_text) + 1


def _not_a_value(shown: str, field: str, word: str, values: list[str], schema: str) -> str:
    case = next((value for value in values if value.casefold() == word.casefold()), None)
    why = f"the answer must be written {case!r}: the case counts" if case else f"{word!r} is none of them{did_you_mean(word, values)}"
    return f"the prompt shows {shown}, but {field} in {schema} is one of {', '.join(map(repr, values))}: {why}; ask for the schema's own values"


def _where(text: str, index: int) -> tuple[int, int]:
    before = text[:index]
    return before.count("\n"), index - (before.rfind("\n") + 1)

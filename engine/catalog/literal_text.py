"""Literal text that says something else than its author meant: a control character in a
text or a pattern (most often a double-quoted YAML string that read `\\b` as a backspace),
a language code that names another language than the text around it (or no language), and
a model whose provider prefix is another maker's. Each a warning at its place, worked out
when asked (`scorers check`, the workbench), in the author's own files only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from typing import Any

from jinja2 import nodes

from ..errors import ConfigError
from .pattern_text import doubled_in_schema_pattern
from .setting_checks import written_expressions, written_settings
from .setting_relations import Unit
from .source import LocatedDict, LocatedList, Place, Span, place_in, position
from .warning import CatalogWarning

#: The control characters YAML's double quotes make of an escape, and what each is called.
_ESCAPES = {
    "\x00": ("\\0", "a null character"), "\x07": ("\\a", "a bell"), "\x08": ("\\b", "a backspace"), "\t": ("\\t", "a tab"),
    "\x0b": ("\\v", "a vertical tab"), "\x0c": ("\\f", "a form feed"), "\r": ("\\r", "a carriage return"), "\x1b": ("\\e", "an escape character"),
}
#: Keys whose text is a regular expression: there even a tab is most likely a `\t` meant for the pattern.
_PATTERN_KEYS = {"pattern", "patternProperties"}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f]")
_CONTROL_IN_PATTERN = re.compile(r"[\x00-\x09\x0b-\x1f]")

#: The model names each maker gives its models, for the provider prefixes that are that maker
#: (a prefix that serves many makers' models, such as openrouter, azure or ollama, is not one).
MAKERS: dict[str, tuple[str, ...]] = {
    "openai": ("gpt-", "o1", "o3", "o4", "chatgpt", "davinci", "text-embedding"),
    "anthropic": ("claude",),
    "gemini": ("gemini", "gemma"),
    "mistral": ("mistral", "mixtral", "codestral", "ministral", "magistral", "pixtral"),
    "deepseek": ("deepseek",),
}


def control_characters(data: Any) -> Iterator[ConfigError]:
    """A warning at each text of a YAML file's data (as loaded, with places) holding a
    control character (a newline aside; a tab aside too, outside patterns)."""
    yield from _texts(data, [])


def _texts(node: Any, keys: list[str]) -> Iterator[ConfigError]:
    if isinstance(node, LocatedDict):
        for key, value in node.items():
            span = node.value_spans.get(key)
            if isinstance(value, str) and span is not None:
                yield from _control(value, span, [*keys, str(key)], str(key) in _PATTERN_KEYS)
                doubled = doubled_in_schema_pattern(value) if str(key) in _PATTERN_KEYS else None
                if doubled is not None:
                    yield CatalogWarning(f"{'.'.join([*keys, str(key)])}: {doubled}", span.start.file, span.start.line, span.start.column, code="doubled-escape")
            else:
                yield from _texts(value, [*keys, str(key)])
    elif isinstance(node, LocatedList):
        for index, value in enumerate(node):
            if isinstance(value, str) and index < len(node.item_spans):
                yield from _control(value, node.item_spans[index], [*keys, str(index)], bool(keys) and keys[-1] in _PATTERN_KEYS)
            else:
                yield from _texts(value, [*keys, str(index)])


def _escape_of(character: str) -> tuple[str, str]:
    """How a control character is written as an escape, and what it is called."""
    return _ESCAPES.get(character, (f"\\x{ord(character):02x}", f"the control character U+{ord(character):04X}"))


def _control(text: str, span: Span, keys: list[str], pattern: bool) -> Iterator[ConfigError]:
    found = (_CONTROL_IN_PATTERN if pattern else _CONTROL).search(text)
    if found is None:
        return
    character = found.group()
    escape, called = _escape_of(character)
    what = "pattern" if pattern else "text"
    label = ".".join(keys)
    if span.raw.startswith('"') and escape in span.raw:
        place = place_in(span, pattern=re.escape(escape))
        message = (
            f"{label}: the {what} holds {called}, not `{escape}`: in double quotes YAML reads `{escape}` as {called}; "
            f"use single quotes ('...{escape}...'), or write `\\{escape}`"
        )
    else:
        place = span.start
        message = f"{label}: the {what} holds {called} (U+{ord(character):04X}), which no editor shows: remove it, or write what it stands for"
    yield CatalogWarning(message, place.file, place.line, place.column, code="control-character")


# -- codes that name something else


def escapes_in_expressions(raw: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """A warning at each expression of a scorer whose quoted text holds a control character
    Jinja's quotes made of an escape: `matches(output, '\\bTODO\\b')` in YAML double quotes
    reaches Jinja as `'\bTODO\b'`, whose `\b` is a backspace, so the pattern never matches."""
    for loc, value, expression in written_expressions(raw, "\\"):
        for constant in (node.value for node in expression.find_all(nodes.Const) if isinstance(node.value, str)):
            found = _CONTROL_IN_PATTERN.search(constant)
            if found is None:
                continue
            escape, called = _escape_of(found.group())
            message = (
                f"{label}.{'.'.join(map(str, loc))}: the text {constant!r} holds {called}, not `{escape}`: inside the expression's quotes "
                f"Jinja reads `{escape}` as {called}, as Python does; write `\\{escape}` there (`\\\\\\\\{escape[1:]}` in YAML double quotes)"
            )
            yield "control-character", message, position(raw, list(loc), value=True)
            break


def wrong_codes(raw: Any, own: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """What a scorer's codes name that its text does not mean: (code, message, place) for a
    model whose provider prefix is another maker's, and for a language option's value that
    is no language, or another language than the scorer's text names. `raw`: the scorer as
    merged; `own`: as written in the author's file, where each place is."""
    for loc, value in written_settings("scorers.*", raw, Unit.MODEL):
        for index, model in enumerate(value if isinstance(value, list) else [value]):
            message = _model_maker(str(model))
            if message is not None:
                at = [*loc, index] if isinstance(value, list) else list(loc)
                yield "model-provider", f"{label}.{'.'.join(map(str, loc))}: {message}", position(raw, at, value=True)
    options = own.get("options") if isinstance(own, Mapping) else None
    for name, option in options.items() if isinstance(options, Mapping) else ():
        if not str(name).endswith("language"):
            continue
        value = option.get("default") if isinstance(option, Mapping) else option
        if not isinstance(value, str) or not value.strip():
            continue
        at = [name, "default"] if isinstance(option, Mapping) else [name]
        message = _language(value, _text_around(raw, str(name)))
        if message is not None:
            yield "language-code", f"{label}.options.{'.'.join(map(str, at))}: {message}", position(options, at, value=True)


#: Codes the standard reserves for other uses than a country, with the country's own code.
_RESERVED_COUNTRIES = {"UK": "GB", "EL": "GR", "EU": None, "UN": None}
_SAYS_COUNTRY = re.compile(r"\b(?:country|countries|iso[ -]?3166|market|region)\b", re.IGNORECASE)


def country_codes(own: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for each value of a list option's entries that its declaration
    says is a country code (ISO 3166-1 alpha-2) and that is none (`UK`, where the United
    Kingdom is `GB`): an item keyed by the country's own code never finds its entry."""
    import pycountry

    options = own.get("options") if isinstance(own, Mapping) else None
    for name, declared in options.items() if isinstance(options, Mapping) else ():
        items = declared.get("items") if isinstance(declared, Mapping) else None
        properties = items.get("properties") if isinstance(items, Mapping) else None
        entries = declared.get("default") if isinstance(declared, Mapping) else None
        if not isinstance(properties, Mapping) or not isinstance(entries, list):
            continue
        keys = [key for key, node in properties.items() if _SAYS_COUNTRY.search(f"{key} {node.get('description', '') if isinstance(node, Mapping) else ''}")]
        for index, entry in enumerate(entries):
            for key in keys:
                value = entry.get(key) if isinstance(entry, Mapping) else None
                if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z]{2}", value) or pycountry.countries.get(alpha_2=value.upper()) is not None:
                    continue
                meant = _RESERVED_COUNTRIES.get(value.upper())
                country = pycountry.countries.get(alpha_2=meant) if meant else None
                yield "country-code", (
                    f"{label}.options.{name}[{index}].{key}: {value!r} is no ISO 3166-1 country code"
                    + (f": {country.name} is {meant!r}" if country is not None else "; write the country's two-letter code")
                ), position(entries, [index, key], value=True)


def _model_maker(model: str) -> str | None:
    prefix, _, name = model.partition("/")
    if prefix not in MAKERS or not name:
        return None
    lowered = name.lower()
    if any(lowered.startswith(family) for family in MAKERS[prefix]):
        return None
    maker = next((other for other, families in MAKERS.items() if any(lowered.startswith(family) for family in families)), None)
    if maker is None:
        return None
    return f"{name} is a model of {maker}, not one {prefix} serves: write {maker}/{name} (or the prefix of the service that hosts it)"


def _text_around(raw: Any, option: str) -> str:
    """What the scorer says in words: its name and description, and the option's description."""
    words = [raw.get("name"), raw.get("description")] if isinstance(raw, Mapping) else []
    options = raw.get("options") if isinstance(raw, Mapping) else None
    schema = options.get(option) if isinstance(options, Mapping) else None
    words.append(schema.get("description") if isinstance(schema, Mapping) else None)
    return "\n".join(word for word in words if isinstance(word, str))


@cache
def _languages() -> tuple[dict[str, str], dict[str, str]]:
    """ISO 639-1 codes to their language's name, and each name (and ISO 639-3 code) to the
    639-1 code, from pycountry (loaded only when a catalog has a language option)."""
    import pycountry

    names: dict[str, str] = {}
    codes: dict[str, str] = {}
    for language in pycountry.languages:
        code = getattr(language, "alpha_2", None)
        if code is None:
            continue
        full = re.sub(r"\s*\(.*?\)", "", language.name)
        names[code] = full
        for name in re.split(r"[;,]\s*", language.name):
            codes[re.sub(r"\s*\(.*?\)", "", name).strip()] = code
        codes[language.alpha_3] = code
    return names, codes


def _language(value: str, around: str) -> str | None:
    names, codes = _languages()
    written = value.strip()
    by_name = {name.casefold(): code for name, code in codes.items()}
    if written not in names:
        code = by_name.get(written.casefold())
        if code is not None and len(written) > 3:
            return None  # a language's name, which the option may take
        if code is not None:
            return f"{value!r} is not an ISO 639-1 code (two letters): {names[code]} is {code!r}"
        return f"{value!r} is no language this engine knows: write an ISO 639-1 code (two letters, e.g. 'en' for English)"
    mentioned = [name for name in codes if len(name) > 3 and not name.isupper() and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", around)]
    meant = [codes[name] for name in mentioned]
    if not meant or written in meant:
        return None
    return f"{value!r} is {names[written]}, but the scorer's text names {mentioned[0]}: {mentioned[0]} is {meant[0]!r}"


def _locale_tokens(name: str) -> list[str]:
    """The two-letter parts of a template's name (`toxicity-br/analyze.j2`: br), which name a
    language or a market."""
    return [part for part in re.split(r"[/_\-.]+", name) if len(part) == 2 and part.isalpha() and part.islower()]


def partials_of_another_locale(templates: Any, names: Iterable[str]) -> Iterator[CatalogWarning]:
    """A warning where a template named for one language or market (`toxicity-br/analyze.j2`)
    includes one named for another (`partials/glossary_de.j2`) while the one named for its own
    exists (`partials/glossary_br.j2`): copied from the other market's prompt, it shows the
    judge that market's words."""
    for name in names:
        own = _locale_tokens(name)
        if len(own) != 1:
            continue
        path, text = templates.source(name)
        for found in re.finditer(r"{%-?\s*(?:include|import|from)\s+[\"']([^\"']+)[\"']", text):
            other = _locale_tokens(found[1])
            if len(other) != 1 or other[0] == own[0]:
                continue
            meant = re.sub(rf"(?<![a-z]){other[0]}(?![a-z])", own[0], found[1])
            try:
                templates.path_of(meant)
            except ConfigError:
                continue
            line = text.count("\n", 0, found.start()) + 1
            yield CatalogWarning(
                f"{name}: includes {found[1]!r}, named for {other[0]!r}, in a prompt named for {own[0]!r}, beside {meant!r}: the judge "
                f"is shown the other market's text; include {meant!r}",
                str(path), line, found.start(1) - (text.rfind("\n", 0, found.start()) + 1) + 1, code="partial-of-another-locale",
            )


#: Typographic quotes, which a text written in plain ASCII never holds.
_TYPOGRAPHIC = re.compile(r"[‘’“”]")


def typographic_quotes(own: Any, base: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for a text of the author's options that an expression compares
    with the output as written (not through `normalize()`, which drops every quote) and that
    holds a typographic quote (`We’re`): an output that writes the plain `'` never matches."""
    options = own.get("options") if isinstance(own, Mapping) else None
    expressions = [text for data in (own, base) if isinstance(data, Mapping) for text in texts_in(data.get("steps"))]
    for name, written in options.items() if isinstance(options, Mapping) else ():
        reading = [text for text in expressions if re.search(rf"\boptions\.{re.escape(str(name))}\b", text)]
        if not reading or any("normalize(" in text for text in reading):
            continue
        at: list[Any] = [name, "default"] if isinstance(written, Mapping) and "default" in written else [name]
        value = written.get("default") if isinstance(written, Mapping) else written
        for index, text in ([(None, value)] if isinstance(value, str) else list(enumerate(value)) if isinstance(value, list) else []):
            found = _TYPOGRAPHIC.search(text) if isinstance(text, str) else None
            if found is None:
                continue
            plain = "'" if found[0] in "‘’" else '"'
            yield "typographic-quote", (
                f"{label}.options.{name}: {text!r} holds a typographic {found[0]!r}, and it is matched as written: an output that writes the plain "
                f"{plain} never matches; write {plain}, or compare through `normalize()`"
            ), position(options, [*at, *([] if index is None else [index])], value=True)
            break


def texts_in(node: Any) -> Iterator[str]:
    """Every text under `node`, at any depth (a scorer's steps: its expressions; an answer:
    its labels and reasons)."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, Mapping):
        for value in node.values():
            yield from texts_in(value)
    elif isinstance(node, list):
        for value in node:
            yield from texts_in(value)

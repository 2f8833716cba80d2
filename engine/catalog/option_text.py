"""An option declared `type: string` that the scorer's expressions use as a collection: on
text, `in` tests for a substring, so `words(output) | select('in', options.banned)` with
`banned: "guaranteed, risk-free"` takes 'a', 'is' and 'risk' for banned words. And an option
declared `type: integer` that stands for a part of a whole (its description shows `0.5`, or it
runs 0 to 1 and is called a weight or a share): it can only be whole, 0 or 1. Each named at the
option's `type:` (the declaration is the slip: a list, a number was meant).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from jinja2 import nodes

from .schema_limits import subschemas
from .setting_checks import written_expressions
from .source import Place, position

#: The filters that test each item of a list with a test given by name (`select('in', ...)`).
_ITEM_TESTS = frozenset({"select", "reject"})
#: What separates the items of a list written as text: a comma, a semicolon, a bar or a line.
_SEPARATED = re.compile(r"\S\s*[,;|\n]\s*\S")


def text_options_as_lists(raw: Any, own: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for each text option an expression looks items up in. `raw`: the
    scorer as merged; `own`: as written in the author's file, where the options are declared."""
    options = own.get("options") if isinstance(own, Mapping) else None
    if not isinstance(options, Mapping):
        return
    said: set[str] = set()
    for loc, value, expression in written_expressions(raw, "options."):
        for name, each in _looked_up_in(expression):
            declared = options.get(name)
            default = declared.get("default") if isinstance(declared, Mapping) else None
            if name in said or not isinstance(declared, Mapping) or declared.get("type") != "string":
                continue
            if not each and not (isinstance(default, str) and _SEPARATED.search(default)):
                continue  # one value looked up in text may well be a substring test
            said.add(name)
            line = position(raw, list(loc), value=True)
            where = f" (line {line.line})" if line is not None and line.line else ""
            shown = f" ({default!r})" if isinstance(default, str) else ""
            yield "text-as-list", (
                f"{label}.options.{name}.type: string, but `{value}`{where} looks items up in options.{name} as in a list: in text, "
                f"`in` tests for a substring, so any part of the text{shown} counts (a short word, a few letters); "
                f"declare a list (`type: array`, `items: {{type: string}}`, the default a YAML list)"
            ), position(options, [name, "type"], value=True)


#: Words of an option's name or description that say it is a part of a whole.
_PART_WORDS = frozenset("weight weighting share fraction ratio proportion probability portion credit partial discount penalty factor".split())
#: A number with a fractional part, as a description shows an example value (`e.g. 0.5`).
_DECIMAL = re.compile(r"(?<![\w.])\d*\.\d*[1-9]\d*(?![\w.])")


def whole_numbers_for_parts(own: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for each option declared `type: integer` whose description
    shows a number with a fractional part, or that runs 0 to 1 and whose name or description
    says it is a part of a whole (a weight, a share, a credit): every part between is refused."""
    options = own.get("options") if isinstance(own, Mapping) else None
    for name, declared in options.items() if isinstance(options, Mapping) else ():
        found = _whole_number_for_a_part(str(name), declared)
        if found is not None:
            yield "whole-number-part", (
                f"{label}.options.{name}.type: integer takes whole numbers only, but {found[0]}{found[1]}: every value between is refused "
                f"(a user's {found[2]} is an error); declare `type: number`"
            ), position(options, [name, "type"], value=True)


def whole_numbers_in_answers(schema: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """The same of each field of an answer schema: a judge decoding under it can only give the
    whole numbers, so a share "counting in part" comes back as its ends."""
    for name, declared in subschemas(schema, []):
        found = _whole_number_for_a_part(name.rsplit(".", 1)[-1], declared) if name else None
        if found is not None:
            yield "whole-number-part", (
                f"{label}: {name} is declared `type: integer`, which takes whole numbers only, but {found[0]}{found[1]}: the judge "
                f"can answer no value between, so every part comes back as an end; declare `type: number`"
            ), position(declared, ["type"], value=True)


def _whole_number_for_a_part(name: str, declared: Any) -> tuple[str, str, str] | None:
    """Why a declaration of `type: integer` is a part of a whole, what its range then allows,
    and a value between it refuses; None when it is not one."""
    if not isinstance(declared, Mapping) or declared.get("type") != "integer":
        return None
    described = str(declared.get("description") or "")
    shown = _DECIMAL.search(described)
    words = {*re.findall(r"[a-z]+", described.lower()), *name.lower().split("_")}
    unit_range = declared.get("minimum") == 0 and declared.get("maximum") == 1
    if shown is None and not (unit_range and words & _PART_WORDS):
        return None
    why = f"its description shows {shown.group(0)}" if shown is not None else f"it is a {sorted(words & _PART_WORDS)[0]}"
    return why, ", and from 0 to 1 it can only be 0 or 1" if unit_range else "", shown.group(0) if shown is not None else "0.5"


def _looked_up_in(expression: nodes.Node) -> Iterator[tuple[str, bool]]:
    """The options that `in` looks something up in, each with whether every item of a list is
    (`select('in', options.x)`) rather than one value (`x in options.x`)."""
    for node in (expression, *expression.find_all((nodes.Compare, nodes.Filter))):
        if isinstance(node, nodes.Compare):
            for operand in node.ops:
                name = _option(operand.expr)
                if operand.op in ("in", "notin") and name is not None:
                    yield name, False
        elif isinstance(node, nodes.Filter) and node.name in _ITEM_TESTS and len(node.args) >= 2:
            test, argument = node.args[0], node.args[1]
            name = _option(argument)
            if isinstance(test, nodes.Const) and test.value == "in" and name is not None:
                yield name, True


def _option(node: nodes.Node) -> str | None:
    if isinstance(node, nodes.Getattr) and isinstance(node.node, nodes.Name) and node.node.name == "options":
        return node.attr
    return None


def entries_described_alike(own: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for each entry of a list option (tools, criteria, labels) whose
    text is another entry's word for word under another name: a description pasted twice
    tells the judge two different things are the same one."""
    options = own.get("options") if isinstance(own, Mapping) else None
    for name, declared in options.items() if isinstance(options, Mapping) else ():
        entries = declared.get("default") if isinstance(declared, Mapping) else declared
        if not isinstance(entries, list):
            continue
        seen: dict[tuple[str, str], Any] = {}
        for index, entry in enumerate(entries):
            if not isinstance(entry, Mapping):
                continue
            named = next((str(entry[key]) for key in ("name", "id", "label", "tool", "title") if key in entry), None)
            for key, text in entry.items():
                if not isinstance(text, str) or len(text.split()) < 3 or named is None or text == named:
                    continue
                other = seen.setdefault((str(key), " ".join(text.lower().split())), named)
                if other != named:
                    where = [name, "default", index, key] if isinstance(declared, Mapping) and "default" in declared else [name, index, key]
                    yield "entries-alike", (
                        f"{label}.options.{name}[{index}].{key}: {named!r} is given the same {key} as {other!r} ({text!r}): the judge reads the "
                        f"two as one thing and tells them apart by name only; write what {named!r} is"
                    ), position(options, where, value=True)


def fields_described_alike(schema: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for each field of an answer schema whose description is a
    sibling's word for word under another name: the judge, told what goes in each field by
    its description, is told the same of both and cannot tell them apart."""
    for _, node in subschemas(schema, []):
        properties = node.get("properties")
        seen: dict[str, str] = {}
        for name, field in properties.items() if isinstance(properties, Mapping) else ():
            text = field.get("description") if isinstance(field, Mapping) else None
            if not isinstance(text, str) or len(text.split()) < 4:
                continue
            first = seen.setdefault(" ".join(text.lower().split()), str(name))
            if first != name:
                yield "entries-alike", (
                    f"{label}: {name} is described word for word as {first} is ({_short(text)}): the judge reads the two fields as one "
                    f"and fills them alike; write what goes in {name}"
                ), position(field, ["description"], value=True)


def _short(text: str) -> str:
    said = " ".join(text.split())
    return repr(said if len(said) <= 90 else said[:89] + "…")


_MAY_BE_EMPTY = re.compile(r"\bempty\b|\bif any\b|\bor none\b|\bwhen (?:it|there) (?:has|are|is) (?:none|no)\b", re.IGNORECASE)
_EVERY = re.compile(r"\b(?:every|all|each)\b", re.IGNORECASE)


def list_bounds_against_description(schema: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for each list of an answer schema whose bound its description
    denies: `minItems: 1` on a list "empty when there are none" makes the judge invent one (a
    flawless answer can no longer score best), `maxItems: 1` on "every category broken" keeps
    only one."""
    every = list(subschemas(schema, []))
    objects = {name: node for name, node in every if node.get("type") == "object"}
    arrays = [(name, node) for name, node in every if node.get("type") == "array"]
    for name, declared in arrays:
        parent = objects.get(name.rpartition(".")[0])
        lists = [other for other, _ in arrays if other.rpartition(".")[0] == name.rpartition(".")[0]]
        described = str(declared.get("description") or (parent.get("description") if parent is not None and len(lists) == 1 else "") or "")
        least, most = declared.get("minItems"), declared.get("maxItems")
        if isinstance(least, int) and least >= 1 and _MAY_BE_EMPTY.search(described):
            yield "bound-against-description", (
                f"{label}: {name} has `minItems: {least}`, but its description lets it be empty ({described!r}): a judge decoding under the "
                f"schema must name {least} or more where there are none, and the best score is out of reach; write `minItems: 0`"
            ), position(declared, ["minItems"], value=True)
        if most == 1 and _EVERY.search(described):
            yield "bound-against-description", (
                f"{label}: {name} has `maxItems: 1`, but its description asks for every one ({described!r}): the judge can give only one, "
                f"and the rest are never counted; write the most there can be"
            ), position(declared, ["maxItems"], value=True)


#: Flags of the function library that take something away when true: normalize's `case`
#: folds case, `punctuation` removes it ...; matches' third argument ignores case.
_REMOVING_FLAGS = {"normalize": ("case", "punctuation", "whitespace", "accents"), "matches": ("ignore_case",), "similarity": ()}
#: Words of an option's name or description that keep what such a flag takes away.
_KEEPING = re.compile(r"\b(?:sensitive|keep\w*|preserv\w*|respect\w*|distinguish\w*|tell\b[^.]*\bapart|tell\s+upper\s+from\s+lower|strict)\b", re.IGNORECASE)


def keeping_options_passed_to_removing_flags(raw: Any, own: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for an option that keeps something (`case_sensitive`: tell upper
    from lower case) passed as it is to a flag that takes it away when true (`normalize(...,
    case=options.case_sensitive)` folds case exactly when the option says to keep it)."""
    options = raw.get("options") if isinstance(raw, Mapping) else None
    for loc, value, expression in written_expressions(raw, "options."):
        for call in [expression, *expression.find_all(nodes.Call)]:
            if not isinstance(call, nodes.Call) or not isinstance(call.node, nodes.Name) or call.node.name not in _REMOVING_FLAGS:
                continue
            flags = _REMOVING_FLAGS[call.node.name]
            given = [(keyword.key, keyword.value) for keyword in call.kwargs if keyword.key in flags]
            if call.node.name == "matches" and len(call.args) >= 3:
                given.append(("ignore_case", call.args[2]))
            for flag, argument in given:
                name = _option(argument)
                declared = options.get(name) if isinstance(options, Mapping) and name else None
                said = f"{name} {declared.get('description') or ''}" if isinstance(declared, Mapping) else str(name or "")
                if name is None or not _KEEPING.search(said.replace("_", " ")):
                    continue
                steps = raw.get("steps") if isinstance(raw, Mapping) else None
                where = [str(steps[part].get("id", part)) if index == 1 and isinstance(steps, list) and isinstance(part, int) and part < len(steps) and isinstance(steps[part], Mapping) else str(part) for index, part in enumerate(loc)]
                yield "flag-inverted", (
                    f"{label}.{'.'.join(where[1:] if where[:1] == ['steps'] else where)}: `{flag}=options.{name}` takes away what `{name}` says to keep: {call.node.name}'s "
                    f"`{flag}` removes it when true, so it is removed exactly when the option asks to keep it; write `{flag}=not options.{name}`"
                ), position(raw, list(loc), value=True)


def exclusive_ends_against_description(schema: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for a number of an answer schema whose `exclusiveMinimum` or
    `exclusiveMaximum` is an end its description gives ("from 1 (no help) to 5"): that end is
    refused, so the judge can never give it, and the score never reaches that end."""
    from .prompt_answers import RANGE_SAID

    for name, declared in subschemas(schema, []):
        said = RANGE_SAID.search(str(declared.get("description") or "")) if declared.get("type") in ("integer", "number") else None
        if said is None or said["low"] is not None:
            continue
        ends = {"exclusiveMinimum": float(said["from"] or said["between"]), "exclusiveMaximum": float(said["to"] or said["and"])}
        for key, end in ends.items():
            bound = declared.get(key)
            if isinstance(bound, (int, float)) and not isinstance(bound, bool) and float(bound) == end:
                kept = key.removeprefix("exclusive").lower()
                yield "bound-against-description", (
                    f"{label}: {name} has `{key}: {bound:g}`, which refuses {bound:g}, but its description gives {bound:g} as an end "
                    f"({said.group(0)!r}): the judge can never answer it; write `{kept}: {bound:g}`"
                ), position(declared, [key], value=True)


_STEM_FILLER = frozenset("the a an of to in on is are be it its and or by with for from as that this".split())


def _stems(text: str) -> set[str]:
    return {re.sub(r"(?:ing|ed|es|s)$", "", word) for word in re.findall(r"[a-z]+", text.lower()) if word not in _STEM_FILLER and len(word) > 2}


def option_words_against_comments(own: Any, base: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for an option given one of its words (`mode: subset`) with a
    comment that says, in the words the base scorer's description gives each of them, what
    another does ("every expected call must be made; other calls may come too" is superset)."""
    from .setting_checks import comment_at

    options = own.get("options") if isinstance(own, Mapping) else None
    declared = base.get("options") if isinstance(base, Mapping) else None
    described = " ".join(str(base.get("description") or "").split()) if isinstance(base, Mapping) else ""
    if not isinstance(options, Mapping) or not isinstance(declared, Mapping):
        return
    for name, value in options.items():
        declaration = declared.get(name)
        words = declaration.get("enum") if isinstance(declaration, Mapping) else None
        if not isinstance(value, str) or not isinstance(words, list) or value not in words:
            continue
        comment = comment_at(options, name)
        said = _stems(comment or str(own.get("description") or ""))
        texts = {str(word): found[1] for word in words if (found := re.search(rf"\b{re.escape(str(word))}:\s*([^;.]+)", described))}
        if value not in texts or len(said) < 3:
            continue
        # What only one word's definition says (superset's "other calls may come too").
        own_words = {word: _stems(text) - set().union(*(_stems(other) for key, other in texts.items() if key != word)) for word, text in texts.items()}
        likeness = {word: len(said & stems) for word, stems in own_words.items()}
        best = max(likeness, key=lambda word: likeness[word])
        if best != value and likeness[value] == 0 and likeness[best] >= (2 if comment else 1):
            yield "word-against-comment", (
                f"{label}.options.{name}: {value!r} is, by the description, {texts[value].strip()!r}, but {'its comment' if comment else 'the scorer' + chr(39) + 's own description'} says what {best!r} "
                f"does ({texts[best].strip()!r}): write `{name}: {best}`"
            ), position(options, [name], value=True)


def described_values_refused(schema: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for a number of an answer schema whose `minimum` or `maximum`
    refuses a value its own description gives ("0 when it states every obligation" beside
    `minimum: 1`, "from 0 (not relevant)" beside `minimum: 1`): the judge can never answer it."""
    from .prompt_answers import RANGE_SAID

    for name, declared in subschemas(schema, []):
        if declared.get("type") not in ("integer", "number"):
            continue
        described = str(declared.get("description") or "")
        ranged = RANGE_SAID.search(described)
        given = [float(found) for found in re.findall(r"(?<![\w.])(\d+(?:\.\d+)?)\s+(?:when|if|for|means)\b", described)]
        if ranged is not None and ranged["low"] is None:
            given += [float(ranged["from"] or ranged["between"]), float(ranged["to"] or ranged["and"])]
        for key, below in (("minimum", True), ("maximum", False)):
            bound = declared.get(key)
            outside = [value for value in given if isinstance(bound, (int, float)) and not isinstance(bound, bool) and (value < bound if below else value > bound)]
            if outside:
                yield "bound-against-description", (
                    f"{label}: {name} has `{key}: {bound:g}`, but its description gives {outside[0]:g} ({described.strip()!r}): the judge "
                    f"can never answer {outside[0]:g}; write `{key}: {outside[0]:g}`"
                ), position(declared, [key], value=True)


def order_against_description(own: Any, base: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for a list option the declaration says is an order ("Tool names
    in the order they must be called") whose items the scorer's own description names in
    another order ("searched ... read the fare rules before it booked"): the order is turned
    round, and the runs that keep the described one fail."""
    options = own.get("options") if isinstance(own, Mapping) else None
    declared = base.get("options") if isinstance(base, Mapping) else None
    described = " ".join(str(own.get("description") or "").lower().split()) if isinstance(own, Mapping) else ""
    if not isinstance(options, Mapping) or not isinstance(declared, Mapping):
        return
    for name, value in options.items():
        declaration = declared.get(name)
        items = value.get("default") if isinstance(value, Mapping) else value
        if not isinstance(declaration, Mapping) or "order" not in str(declaration.get("description") or "") or not isinstance(items, list) or len(items) < 2:
            continue
        if not all(isinstance(item, str) and re.fullmatch(r"[\w.:-]+", item) for item in items):
            continue  # names only (tools, steps): sentences share words in any order
        words = {str(item): {word.rstrip("s") for word in re.split(r"[_\W]+", str(item).lower()) if len(word) >= 4} for item in items}
        shared = {word for item, stems in words.items() for word in stems if any(word in other for key, other in words.items() if key != item)}
        where: dict[str, int] = {}
        for item, stems in words.items():
            found = [described.find(str(item).lower())] + [match.start() for stem in stems - shared for match in [re.search(rf"\b{re.escape(stem)}", described)] if match]
            places = [place for place in found if place >= 0]
            if places:
                where[item] = min(places)
        if len(where) == len(items) and sorted(where, key=lambda item: where[item]) != [str(item) for item in items]:
            said = sorted(where, key=lambda item: where[item])
            yield "order-against-description", (
                f"{label}.options.{name}: {', '.join(map(str, items))}, but the scorer's description names them in the order "
                f"{', '.join(said)}: runs that keep the described order fail; write [{', '.join(said)}]"
            ), position(options, [name], value=True)


_IDENTIFIER = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")


def tools_named_otherwise(own: Any, text: str, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for a tool an option names (`tool: websearch`) that the catalog
    file never names, where it names one alike (`web_search`, `show_worked_solution` for
    `show_solution`): a call is matched by its exact name, so the tool is never found."""
    options = own.get("options") if isinstance(own, Mapping) else None
    named = set(_IDENTIFIER.findall(text))
    for name, written in options.items() if isinstance(options, Mapping) else ():
        if not re.search(r"(?:^|_)tools?$", str(name)):
            continue
        at: list[Any] = [name, "default"] if isinstance(written, Mapping) and "default" in written else [name]
        value = written.get("default") if isinstance(written, Mapping) else written
        for index, tool in ([(None, value)] if isinstance(value, str) else list(enumerate(value)) if isinstance(value, list) else []):
            if not isinstance(tool, str) or text.count(tool) > 1:
                continue
            words = set(tool.split("_"))
            alike = sorted(other for other in named if other != tool and (other.replace("_", "") == tool.replace("_", "") or other.rstrip("s") == tool.rstrip("s") or len(words) > 1 and words < set(other.split("_"))))
            if len(alike) == 1:
                yield "tool-named-otherwise", (
                    f"{label}.options.{name}: {tool!r} is named nowhere else in the file, which names the tool {alike[0]!r}: calls are matched "
                    f"by their exact name, so {tool!r} is never found; write {alike[0]!r}"
                ), position(options, [*at, *([] if index is None else [index])], value=True)

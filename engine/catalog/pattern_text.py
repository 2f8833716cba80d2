"""A regular expression whose backslash was written twice: `'\\\\b(TODO)\\\\b'` in YAML single
quotes keeps both backslashes, and the pattern then looks for a backslash followed by a `b`
(never a word boundary), so it matches almost nothing. Held for the values a scorer uses as
patterns: an option passed to `matches()` (its default) and a text written in the call.

And a pattern anchored with `^` (or `$`) without `(?m)`, matched against a whole text, in a
scorer whose description speaks of a line of it ("a `Sources:` line"): the anchor holds only at
the start (end) of the whole text, so the line found anywhere else never matches.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from jinja2 import nodes

from .setting_checks import written_expressions
from .source import Place, position

#: The functions of expressions that read a regular expression, with the index of that argument.
PATTERN_ARGUMENTS = {"matches": 1}
#: An escape of a class or an anchor (`\b`, `\d`, `\w`, `\s` and their opposites) preceded by a
#: backslash that escapes it: an even number of backslashes, which a regex reads as literal ones.
_DOUBLED = re.compile(r"(?<!\\)((?:\\\\)+)([bBdDwWsS])")
_CALLED = {"b": "a word boundary", "B": "a place inside a word", "d": "a digit", "D": "a non-digit", "w": "a word character",
           "W": "a non-word character", "s": "a space", "S": "a non-space"}


def doubled_escapes(raw: Any, own: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for each value the scorer uses as a pattern that holds a doubled
    backslash before a class letter. `raw`: the scorer as merged; `own`: as written in the
    author's file, where an option's default is."""
    for pattern in used_patterns(raw, own):
        where = "inside the expression's quotes" if pattern.written_in_call else "outside YAML double quotes"
        message = _doubled(pattern.value, pattern.called, where)
        if message is not None:
            yield "doubled-escape", f"{label}.{pattern.at}: {message}", pattern.place


class UsedPattern(NamedTuple):
    """A value a scorer uses as a regular expression: written in the call, or an option's."""

    value: str
    #: How a message names it: `the pattern '...' of matches()`, `options.pattern, a pattern of matches() (line 9),`.
    called: str
    #: Where it is written, as a dotted path under the scorer (`steps.0.values.found`, `options.pattern.default`).
    at: str
    place: Place | None
    written_in_call: bool


def used_patterns(raw: Any, own: Any) -> Iterator[UsedPattern]:
    """Each pattern a scorer's expressions give a function that reads one (`matches()`), once."""
    options = own.get("options") if isinstance(own, Mapping) else None
    said: set[str] = set()
    for loc, _, expression in written_expressions(raw, "("):
        for call in (node for node in (expression, *expression.find_all(nodes.Call)) if isinstance(node, nodes.Call)):
            index = PATTERN_ARGUMENTS.get(call.node.name) if isinstance(call.node, nodes.Name) else None
            if index is None or len(call.args) <= index:
                continue
            function, argument = call.node.name, call.args[index]  # type: ignore[attr-defined]
            if isinstance(argument, nodes.Const) and isinstance(argument.value, str):
                yield UsedPattern(argument.value, f"the pattern {argument.value!r} of {function}()", ".".join(map(str, loc)), position(raw, list(loc), value=True), True)
            elif isinstance(argument, nodes.Getattr) and isinstance(argument.node, nodes.Name) and argument.node.name == "options":
                option = options.get(argument.attr) if isinstance(options, Mapping) else None
                default = option.get("default") if isinstance(option, Mapping) else option
                if argument.attr in said or not isinstance(default, str):
                    continue
                said.add(argument.attr)
                at = [argument.attr, "default"] if isinstance(option, Mapping) else [argument.attr]
                written = position(options, at, value=True)
                yield UsedPattern(default, f"options.{argument.attr}, a pattern of {function}() ({_used_at(raw, loc, written)}),", "options." + ".".join(at), written, False)


#: Words of a description that say the whole output is to be the pattern's match.
_WHOLE_WORDS = frozenset("only exactly entire entirely whole solely nothing just consists".split())


def anchored_at_both_ends(raw: Any, own: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for each pattern a scorer uses that starts with `^` and ends with
    `$`, without `(?m)`, in a scorer whose description does not say the output is to be nothing
    but the match: "1 when the reply gives a phone number" with `^\\d{3}-\\d{4}$` scores 0 for
    a reply that gives the number inside a sentence."""
    description = str(raw.get("description") or "") if isinstance(raw, Mapping) else ""
    if set(re.findall(r"[a-z]+", description.lower())) & (_WHOLE_WORDS | _LINE_WORDS):
        return  # the whole output is meant, or a line of it (said by anchored_to_the_whole_text)
    for pattern in used_patterns(raw, own):
        value = pattern.value
        if _anchored_ends(value) != (True, True) or re.match(r"\(\?[a-z]*m", value):
            continue
        yield "anchored-to-the-whole-text", (
            f"{label}.{pattern.at}: {pattern.called.rstrip(',')} starts with `^` and ends with `$`: it matches only an output that is "
            f"nothing but its match, so one that gives it inside a sentence scores as if it never did, but the scorer's description "
            f"does not ask for the output to be only that; drop the anchors (`\\b` marks a word's edge), or say so in the description"
        ), pattern.place


#: Words of a description that speak of one line of a text, somewhere in it.
_LINE_WORDS = frozenset("line lines anywhere".split())


def anchored_to_the_whole_text(raw: Any, own: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for each pattern written in a `matches()` call, or given as an
    option's default, that starts with `^` or ends with `$`, without `(?m)`, in a scorer whose
    description speaks of a line or of finding it anywhere."""
    description = str(raw.get("description") or "") if isinstance(raw, Mapping) else ""
    said = next((word for word in re.findall(r"[a-z]+", description.lower()) if word in _LINE_WORDS), None)
    if said is None:
        return
    for used in used_patterns(raw, own):
        anchor = _anchor(used.value)
        if used.written_in_call or anchor is None:
            continue
        end = "start" if anchor == "^" else "end"
        yield "anchored-to-the-whole-text", (
            f"{label}.{used.at}: {used.called.rstrip(',')} {'starts' if anchor == '^' else 'ends'} with `{anchor}`, which without (?m) holds "
            f"only at the {end} of the whole text, but the scorer's description speaks of {'finding it anywhere' if said == 'anywhere' else 'a line of it'}: "
            f"a match {'with other words before it' if anchor == '^' else 'with other words after it'} never counts; drop the `{anchor}` (`\\b` marks a word's edge)"
        ), used.place
    for loc, _, expression in written_expressions(raw, "matches("):
        for call in (node for node in (expression, *expression.find_all(nodes.Call)) if isinstance(node, nodes.Call)):
            if not isinstance(call.node, nodes.Name) or call.node.name != "matches" or len(call.args) < 2:
                continue
            pattern = call.args[1]
            if not isinstance(pattern, nodes.Const) or not isinstance(pattern.value, str) or re.match(r"\(\?[a-z]*m", pattern.value):
                continue
            anchor = _leading_anchor(pattern.value)
            if anchor is None:
                continue
            end = "start" if anchor == "^" else "end"
            yield "anchored-to-the-whole-text", (
                f"{label}.{'.'.join(map(str, (_step_named(raw, loc), *loc[2:]) if _step_named(raw, loc) else loc))}: the pattern {pattern.value!r} of matches() {'starts' if anchor == '^' else 'ends'} with `{anchor}`, which "
                f"without (?m) holds only at the {end} of the whole text, but the scorer's description speaks of {'finding it anywhere' if said == 'anywhere' else 'a line of it'}: "
                f"a line further {'down' if anchor == '^' else 'up'} never matches; write `(?m)` at the pattern's start for the {end} of any line"
            ), position(raw, list(loc), value=True)


def anchor_on_one_alternative(raw: Any, own: Any, label: str) -> Iterator[tuple[str, str, Place | None]]:
    """(code, message, place) for each pattern a scorer uses that starts with `^` (or ends with
    `$`) and has alternatives outside any group (`^TL;DR|Summary:`): the anchor binds only to the
    first (last) alternative, so the others match anywhere."""
    for used in used_patterns(raw, own):
        if not _top_level_alternatives(used.value):
            continue
        anchor = _leading_anchor(used.value)
        if anchor is None:
            continue
        which = "first" if anchor == "^" else "last"
        yield "anchor-on-one-alternative", (
            f"{label}.{used.at}: {used.called.rstrip(',')} {'starts' if anchor == '^' else 'ends'} with `{anchor}` and has alternatives (`|`) "
            f"outside a group: the `{anchor}` binds only to the {which} of them, and the others match anywhere in the text; "
            f"group them: `{'^(?:' + used.value[1:] + ')' if anchor == '^' else '(?:' + used.value[:-1] + ')$'}`"
        ), used.place


def _top_level_alternatives(pattern: str) -> bool:
    """Whether a regular expression has a `|` outside every group and character class."""
    depth, in_class, escaped = 0, False, False
    for character in pattern:
        if escaped:
            escaped = False
        elif character == "\\":
            escaped = True
        elif in_class:
            in_class = character != "]"
        elif character == "[":
            in_class = True
        elif character == "(":
            depth += 1
        elif character == ")":
            depth = max(depth - 1, 0)
        elif character == "|" and depth == 0:
            return True
    return False


def _anchor(pattern: str) -> str | None:
    """The one end a pattern is anchored at without (?m) (`^` or `$`), None for neither or both."""
    if re.match(r"\(\?[a-z]*m", pattern):
        return None
    starts, ends = _anchored_ends(pattern)
    return None if starts == ends else "^" if starts else "$"


def _leading_anchor(pattern: str) -> str | None:
    """`^` for a pattern that starts with it, else `$` for one that ends with it, else None."""
    starts, ends = _anchored_ends(pattern)
    return "^" if starts else "$" if ends else None


def _anchored_ends(pattern: str) -> tuple[bool, bool]:
    """Whether a pattern starts with `^`, and whether it ends with a `$` that is not escaped."""
    return pattern.startswith("^"), pattern.endswith("$") and not pattern.endswith("\\$")


def doubled_in_schema_pattern(pattern: str) -> str | None:
    """What is wrong with a schema's `pattern:` whose backslash was written twice, if it was."""
    return _doubled(pattern, "the pattern", "outside YAML double quotes")


def _doubled(pattern: str, what: str, where: str) -> str | None:
    found = _DOUBLED.search(pattern)
    if found is None:
        return None
    backslashes, letter = found.groups()
    return (
        f"{what} holds `{backslashes}{letter}`, which a regular expression reads as a backslash followed by {letter!r}, "
        f"not {_CALLED[letter]}: it matches only text with a backslash in it; {where} a backslash is kept as written, "
        f"so write it once (`\\{letter}`)"
    )


def _used_at(raw: Any, loc: tuple[Any, ...], written: Place | None) -> str:
    """Where the pattern is used, as the author can find it: the line when the call is in the
    same file as the option, else the step of the scorer extended (a line of a catalog the
    author did not write, the built-in one, would mean nothing to them)."""
    place = position(raw, list(loc), value=True)
    if place is not None and written is not None and place.file == written.file:
        return f"line {place.line}"
    step = _step_named(raw, loc)
    where = f"the step `{step}`" if step else f"`{'.'.join(map(str, loc))}`"
    return f"used by {where} of the scorer it extends"


def _step_named(raw: Any, loc: tuple[Any, ...]) -> str | None:
    """The id of the step that `loc` (a path in the scorer) lies in, when it lies in one."""
    steps = raw.get("steps") if isinstance(raw, Mapping) else None
    if len(loc) < 2 or loc[0] != "steps" or not isinstance(steps, list) or not isinstance(loc[1], int) or loc[1] >= len(steps):
        return None
    step = steps[loc[1]]
    ident = step.get("id") if isinstance(step, Mapping) else None
    return str(ident) if ident is not None else None

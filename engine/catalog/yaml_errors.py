"""YAML that does not parse, at the place to fix: for something left open (a quote, a
bracket), where it was opened, not where the parser gave up lines later; for a line indented
wrongly, that line; for a tab, that YAML does not allow it."""

from __future__ import annotations

from pathlib import Path

import yaml

from ..errors import ConfigError


def yaml_error(exc: yaml.MarkedYAMLError, path: Path) -> ConfigError:
    """A YAML syntax error at the place to fix. For something left open (a quote, a bracket)
    that is where it was opened, not where the parser gave up, lines later; for a line
    indented wrongly, that line."""
    problem = exc.problem or str(exc)
    gave_up = exc.problem_mark
    opened = exc.context_mark
    if "'\\t'" in problem and gave_up is not None:
        text = gave_up.buffer.splitlines()[gave_up.line] if gave_up.buffer and gave_up.line < len(gave_up.buffer.splitlines()) else ""
        where = "for indentation" if not text[: gave_up.column].strip() else "here"
        return ConfigError(f"invalid YAML: YAML does not allow tabs {where}; use spaces", path, gave_up.line + 1, gave_up.column + 1)
    quote = _unclosed_quote(exc, opened, gave_up)
    if quote is not None:
        line, column, char = quote
        return ConfigError(f"invalid YAML: the quote {char} opened here is not closed on its line ({problem} at line {gave_up.line + 1 if gave_up else '?'})", path, line, column)
    if exc.context and opened is not None and (gave_up is None or opened.line != gave_up.line):
        construct = exc.context.removeprefix("while parsing ").removeprefix("while scanning ")
        if construct.startswith("a block ") and gave_up is not None:
            # A block closes by indentation, so nothing was left open: the line the parser
            # stopped at is the one indented wrongly (a key too far left, a step out of `steps:`).
            block = "list" if construct == "a block collection" else construct.removeprefix("a block ")
            what = (
                f"a list item at the indentation of the keys of the {block} that starts at line {opened.line + 1}; indent it under the key whose list it is in"
                if "found '-'" in problem
                else f"this line lines up with no key or item of the {block} that starts at line {opened.line + 1}"
            )
            return ConfigError(f"invalid YAML: wrong indentation: {what}", path, gave_up.line + 1, gave_up.column + 1)
        where = f" at line {gave_up.line + 1}" if gave_up is not None else ""
        return ConfigError(f"invalid YAML: {construct} opened here is not closed ({problem}{where})", path, opened.line + 1, opened.column + 1)
    mark = gave_up or opened
    if problem == "mapping values are not allowed here" and mark is not None and mark.buffer:
        # `key: value` where only a value may be: a key indented further than its siblings.
        text = mark.buffer.splitlines()[mark.line]
        if ": " in text[: mark.column].lstrip().removeprefix("- "):
            return ConfigError(f"invalid YAML: {problem}: a value holding ': ' must be quoted", path, mark.line + 1, mark.column + 1)
        return ConfigError(
            f"invalid YAML: wrong indentation: this key is indented further than the keys above it, inside a value ({problem})",
            path, mark.line + 1, len(text) - len(text.lstrip()) + 1,
        )
    if mark is None:
        return ConfigError(f"invalid YAML: {problem}", path)
    return ConfigError(f"invalid YAML: {problem}", path, mark.line + 1, mark.column + 1)


def _unclosed_quote(exc: yaml.MarkedYAMLError, opened: yaml.Mark | None, gave_up: yaml.Mark | None) -> tuple[int, int, str] | None:
    """A quoted value left open on its line (YAML lets a quote run on to the next lines, so
    the parser gives up further down): its line, column and quote, when one is found between
    the construct the parser was in and where it gave up."""
    if gave_up is None or not gave_up.buffer:
        return None
    buffer = gave_up.buffer
    lines = buffer.splitlines()
    first = opened.line if opened is not None else 0
    for number in range(first, min(gave_up.line + 1, len(lines))):
        text = lines[number]
        quote: tuple[str, int] | None = None
        for index, char in enumerate(text):
            if quote is None:
                if char == "#" and (index == 0 or text[index - 1] in " \t"):
                    break
                if char in "'\"" and (index == 0 or text[index - 1] in " \t:[{,-"):
                    quote = (char, index)
            elif char == quote[0] and (char == "'" or text[index - 1] != "\\"):
                quote = None
        if quote is not None:
            return number + 1, quote[1] + 1, quote[0]
    return None

"""Two values a prompt shows under each other's headings: "The reply must mention:" above
`options.must_avoid` and "The reply must not contain:" above `options.must_include`, or
"Question:" above the output and "Reply:" above the input. The judge reads the headings, so it
rewards what the brief forbids. A heading fits a value by the words it shares with the value's
description (an option's `description:` and name; an item field's words below); named at each
value shown under the other's heading.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from jinja2 import TemplateSyntaxError, nodes

from ..errors import ConfigError
from .template_shows import sharing
from .templates import PromptTemplates
from .warning import CatalogWarning

#: Words a heading may use for each of the item's fields.
_FIELD_WORDS = {
    "output": "reply answer response output completion generated",
    "input": "question request input prompt query asked user",
    "context": "context sources source documents document passages passage retrieved",
    "ground_truth": "expected reference ground truth correct ideal",
}
#: Words that say nothing about which value a heading introduces.
_FILLER = frozenset(
    "the a an of these this that each any every to is are be in for and or it its with below above following here all "
    "as on by from at one per list item items point points".split()
)
#: The longest line read as a heading.
_HEADING_WORDS = 14


class _Shown(NamedTuple):
    what: str  # `options.NAME` or an item field's name
    heading: str
    line: int
    path: Path


def _words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z]+", text.lower()) if word not in _FILLER}


def _subject(node: nodes.Node) -> str | None:
    """What an expression shows: `options.NAME` or an item field, through its filters."""
    while isinstance(node, nodes.Filter) and node.node is not None:
        node = node.node
    if isinstance(node, nodes.Getattr) and isinstance(node.node, nodes.Name) and node.node.name == "options":
        return f"options.{node.attr}"
    return node.name if isinstance(node, nodes.Name) and node.name in _FIELD_WORDS else None


def _shown(tree: nodes.Node, path: Path) -> Iterator[_Shown]:
    """Each value a template shows, with the line of text just above it."""
    text: list[str] = []

    def walk(node: nodes.Node) -> Iterator[_Shown]:
        if isinstance(node, nodes.TemplateData):
            text.append(node.data)
            return
        if isinstance(node, nodes.For):
            yield from seen(node.iter, node.lineno)
            for child in node.body:
                yield from walk(child)
            return
        if isinstance(node, nodes.Output):
            for child in node.nodes:
                if isinstance(child, nodes.TemplateData):
                    text.append(child.data)
                else:
                    yield from seen(child, child.lineno)
            return
        for child in node.iter_child_nodes():
            yield from walk(child)

    def seen(expression: nodes.Node, line: int) -> Iterator[_Shown]:
        what = _subject(expression)
        lines = [line for line in "".join(text).splitlines() if line.strip()]
        text.clear()
        heading = lines[-1].strip() if lines else ""
        if what is not None and heading and len(heading.split()) <= _HEADING_WORDS:
            yield _Shown(what, heading, line, path)

    yield from walk(tree)


def swapped_headings(templates: PromptTemplates, own_folder: Path, names: list[str], options: Mapping[str, Any], label: str) -> Iterator[ConfigError]:
    """A warning at each value the templates `names` show under the heading of another value
    they show, whose own heading fits the first."""
    try:
        trees = sharing(templates, names)
    except (ConfigError, TemplateSyntaxError):
        return  # reported by the compiler
    shown = [found for _, path, _, tree in trees for found in _shown(tree, path)]
    texts = {path: text.splitlines() for _, path, text, _ in trees}
    described = {what: _described(what, options) for what in {found.what for found in shown}}

    def fit(heading: str, what: str) -> int:
        return len(_words(heading) & described[what])

    for found in shown:
        for other in shown:
            if other.what == found.what or not found.path.resolve().is_relative_to(own_folder.resolve()):
                continue
            if fit(found.heading, other.what) > fit(found.heading, found.what) and fit(other.heading, found.what) > fit(other.heading, other.what):
                yield CatalogWarning(
                    f"{label}: `{found.what}` is shown under {found.heading!r}, which describes `{other.what}`, and `{other.what}` under "
                    f"{other.heading!r} (line {other.line}), which describes `{found.what}`: the judge reads each under the other's heading; swap them",
                    str(found.path), found.line, _column(texts[found.path], found), code="shown-under-another-heading",
                )
                break


def _described(what: str, options: Mapping[str, Any]) -> set[str]:
    if what.startswith("options."):
        name = what.removeprefix("options.")
        declaration = options.get(name)
        description = str(declaration.get("description") or "") if isinstance(declaration, Mapping) else ""
        return _words(f"{name.replace('_', ' ')} {description}")
    return _words(_FIELD_WORDS[what])


def _column(lines: list[str], found: _Shown) -> int | None:
    written = lines[found.line - 1] if 0 < found.line <= len(lines) else ""
    match = re.search(rf"\b{re.escape(found.what.removeprefix('options.'))}\b", written)
    return match.start() + 1 - (len("options.") if found.what.startswith("options.") and match.start() >= 8 else 0) if match else None

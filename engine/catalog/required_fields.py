"""A field the scorer requires that none of its steps reads: the caller must give it, and the
judge never sees it. Most often a prompt shows another field in its place, one it shows
already (`{{ input }}` under "Expected answer" where `{{ ground_truth }}` was meant): that
second showing is named at its line, and the field nothing reads at `requires:`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from jinja2 import TemplateSyntaxError, nodes

from ..errors import ConfigError
from ..scoring.steps import step_kind
from .setting_checks import written_settings
from .setting_relations import Unit
from .source import position
from .spec import ScorerDefinition
from .templates import PromptTemplates, names_read, parse_expression
from .warning import CatalogWarning

#: The run's fields a scorer may require (what `requires:` names) that only the steps read;
#: `output` is left out: the engine reads it (an empty output's rule) whether a step does or not.
_READ_BY_STEPS_ONLY = frozenset({"input", "context", "ground_truth", "messages", "turns", "tool_calls", "tool_results", "expected_trajectory", "tools"})


def unread_required(definition: ScorerDefinition, raw: Any, own: Any, templates: PromptTemplates, own_folder: Path, label: str) -> Iterator[CatalogWarning]:
    """Each required field no step reads (at `requires:`), and each second showing of a field
    in one of the author's prompts while a required field is read by none (at its line)."""
    prompts: list[str] = []
    read: set[str] = set()
    try:
        for step in definition.steps:
            for template in step_kind(step.kind).sources(step).templates:
                for name in templates.referenced(template.text, sharing_only=True):
                    prompts.append(name)
                    read |= names_read(templates.environment.parse(templates.source(name)[1]))
        for _, value in written_settings("scorers.*", raw, Unit.EXPRESSION):
            if isinstance(value, str):
                expression = parse_expression(value)
                read |= {node.name for node in (expression, *expression.find_all(nodes.Name)) if isinstance(node, nodes.Name)}
    except (ConfigError, TemplateSyntaxError):
        return  # reported by the compiler
    unread = [field for field in definition.requires if field in _READ_BY_STEPS_ONLY and field not in read]
    if not unread:
        return
    missing = unread[0]
    for name in dict.fromkeys(prompts):
        path, text = templates.source(name)
        if not path.resolve().is_relative_to(own_folder.resolve()):
            continue
        for line, field, first_line in _shown_again(templates.environment.parse(text)):
            column = text.splitlines()[line - 1].find(field) + 1 if line <= len(text.splitlines()) else 0
            yield CatalogWarning(
                f"{label}: `{field}` is shown a second time here (first on line {first_line}), while the scorer requires `{missing}`, which no "
                f"step reads: the judge never sees it; did you mean `{missing}` here?",
                str(path), line, column or None, code="required-unread",
            )
    requires = own.get("requires") if hasattr(own, "get") else None
    for field in unread:
        at = ["requires", list(requires).index(field)] if isinstance(requires, list) and field in requires else ["requires"]
        place = position(own, at, value=True)
        yield CatalogWarning(
            f"{label}.requires: `{field}` is required, but no prompt, expression or rule of the scorer reads it: every item must carry it, "
            f"yet the judge never sees it; show it where it was meant, or leave it out of `requires:`",
            *(place or (None, None, None)), code="required-unread",
        )


def _shown_again(parsed: nodes.Template) -> Iterator[tuple[int, str, int]]:
    """(line, field, first line) of each run field a template prints again on a later line."""
    first: dict[str, int] = {}
    for output in parsed.find_all(nodes.Output):
        for child in output.nodes:
            if isinstance(child, nodes.TemplateData):
                continue
            root = child
            while isinstance(root, nodes.Filter) and root.node is not None:
                root = root.node
            if not isinstance(root, nodes.Name) or root.name not in _READ_BY_STEPS_ONLY:
                continue
            if root.name in first and child.lineno != first[root.name]:
                yield child.lineno, root.name, first[root.name]
            first.setdefault(root.name, child.lineno)


def required_dropped(reads: frozenset[str], own: Any, base: Any, label: str) -> Iterator[CatalogWarning]:
    """An extension's `requires:` (which replaces its base's list, not adds to it) that leaves
    out a field the base requires and the steps still read: an item without it is no longer
    left not scorable, but judged with the field missing (every claim against "no context")."""
    if not isinstance(own, Mapping) or not isinstance(base, Mapping) or not isinstance(own.get("requires"), list) or not isinstance(base.get("requires"), list):
        return
    dropped = [name for name in base["requires"] if name not in own["requires"] and name in reads]
    if dropped:
        yield _left_out(own, label, dropped, base["requires"], (
            f"which {own.get('extends')} requires and its steps read: `requires:` replaces the base's list, so an item without "
            f"{dropped[0]} is judged with it missing instead of left not scorable; list every field"
        ))


#: The fields a verdict is measured against, by the words a description names each with.
_JUDGED_AGAINST = {
    "ground_truth": ("expected answer", "expected output", "reference answer", "ground truth", "gold answer", "ideal answer", "answer key", "mark scheme", "marking scheme"),
    "context": ("the context", "retrieved context", "the passages", "retrieved passages", "the documents", "the sources", "the record"),
}
_LEFT_UNSCORED = re.compile(r"\b(?:not scorable|unscored|not scored|left out)\b", re.IGNORECASE)


def read_but_not_required(reads: frozenset[str], own: Any, label: str) -> Iterator[CatalogWarning]:
    """A field the steps read that `requires:` leaves out while the scorer's description says
    the items without such a thing are not scored, or judges against it by name (an expected
    answer's "answer key", a context's "passages"): an item without it is judged with it
    missing (every fact against no record) instead of left not scorable."""
    if not isinstance(own, Mapping) or not isinstance(own.get("requires"), list):
        return
    description = str(own.get("description") or "")
    missing = [name for name in ("context", "ground_truth", "input", "expected_trajectory", "turns") if name in reads and name not in own["requires"]]
    if missing and _LEFT_UNSCORED.search(description):
        yield _left_out(own, label, missing, missing, (
            f"which the steps read, while the description leaves items without such a thing unscored: an item without "
            f"{missing[0]} is judged with it missing; add it"
        ))
        return
    for name in (name for name in missing if name in _JUDGED_AGAINST):
        named = next((found.group(0) for found in (re.search(rf"\b{re.escape(words)}\b", description, re.IGNORECASE) for words in _JUDGED_AGAINST[name]) if found), None)
        if named is not None:
            yield _left_out(own, label, [name], [name], (
                f"which the steps read and the description judges against ({named!r}): an item without it is judged without it (a guarded "
                f"prompt drops it) instead of left not scorable; add it"
            ))
            return


def _left_out(own: Mapping[str, Any], label: str, missing: Sequence[str], added: Sequence[Any], why: str) -> CatalogWarning:
    """`required-dropped` at the author's `requires:`, with the list to write (theirs, then `added`)."""
    place = position(own, ["requires"], value=True)
    return CatalogWarning(
        f"{label}.requires: leaves out {', '.join(map(repr, missing))}, {why}: [{', '.join(dict.fromkeys([*map(str, own['requires']), *map(str, added)]))}]",
        *(place or (None, None, None)), code="required-dropped",
    )

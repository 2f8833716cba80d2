"""A prompt that defines a verdict the other way round from its schema: a line such as
`- "yes": the context does not support the claim` where the schema's `meaning:` says "yes"
is good. The judge follows the prompt, the score counts by the schema, and every score is
turned round. A part of properties.py's ScorerProof, held for the author's own prompts: a
warning at each line that defines a value so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Protocol

from jinja2 import TemplateSyntaxError

from ...errors import ConfigError
from ...scoring.steps import step_kind
from ..source import Place
from ..templates import PromptTemplates
from ..source import CatalogSource
from ..spec import ScorerDefinition
from .meanings import Meaning, polarity_of_words
from .trials import Trials


class ScorerProof(Protocol):
    """What this proof reads of properties.py's ScorerProof."""

    source: CatalogSource
    definition: ScorerDefinition
    trials: Trials

    @property
    def label(self) -> str: ...
    def warning(self, code: str, message: str, place: Place | None) -> None: ...

#: A line that defines a quoted value: `- "yes": the context supports it`, `"no" when ...`.
_DEFINED = re.compile(r"^\s*(?:[-*•]|\d+[.)])?\s*([\"'`])(?P<value>[^\"'`\n]{1,30})\1\s*(?:when|if|means|meaning|:|=|-|–|—)\s*(?P<words>.+)$")


def verdicts_defined_against(proof: ScorerProof) -> None:
    """`verdict-defined-against-meaning` at each line of the author's prompts that defines a
    value of its step's answer in words of the polarity opposite to the schema's meaning."""
    templates: PromptTemplates | None = None
    for step in proof.definition.steps:
        written = step_kind(step.kind).sources(step)
        polarities = _value_polarities({name: meaning for name, meaning in proof.trials.meanings.items() if name.startswith(f"{step.id}.")})
        if not polarities or not written.templates or written.schema is None:
            continue
        templates = templates or PromptTemplates(proof.source.templates_path)
        own_folder = proof.source.templates_path[0].resolve()
        try:
            reached = [reached for template in written.templates for reached in templates.referenced(template.text)]
        except (ConfigError, TemplateSyntaxError):
            continue  # reported by the compiler
        for name in dict.fromkeys(reached):
            path, text = templates.source(name)
            if not path.resolve().is_relative_to(own_folder):
                continue
            for number, line in enumerate(text.splitlines(), 1):
                found = _DEFINED.match(line)
                meant = polarities.get(found["value"]) if found is not None else None
                said = polarity_of_words(found["words"]) if found is not None and meant is not None else None
                if found is None or said is None or said == meant:
                    continue
                proof.warning(
                    "verdict-defined-against-meaning",
                    f"{proof.label}.{step.id}: the prompt defines \"{found['value']}\" in words that say {said} ({found['words'].strip()[:80]!r}), "
                    f"but the answer schema {written.schema.text} gives \"{found['value']}\" the meaning {meant}: the judge "
                    "answers by the prompt and the score counts by the schema, so each such verdict counts the other way; make the two agree",
                    Place(str(path), number, found.start("value")),
                )


def _value_polarities(meanings: Mapping[str, Meaning]) -> dict[str, str]:
    """Each text value of the choice fields that means good or bad, when every field holding
    it gives it the same meaning."""
    found: dict[str, str] = {}
    clashing: set[str] = set()
    for meaning in meanings.values():
        for value, polarity in (meaning.polarities or {}).items():
            if not isinstance(value, str) or polarity not in ("good", "bad"):
                continue
            if found.setdefault(value, polarity) != polarity:
                clashing.add(value)
    return {value: polarity for value, polarity in found.items() if value not in clashing}

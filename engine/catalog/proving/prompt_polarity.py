"""A prompt that defines a verdict the other way round from its schema: a line such as
`- "yes": the context does not support the claim` where the schema's `meaning:` says "yes"
is good. The judge follows the prompt, the score counts by the schema, and every score is
turned round. The same of a template that lists the answers of one value under words saying
the other (a reason's "The hallucinated claims:" over `verdict == 'no'`). A part of
properties.py's ScorerProof, held for the author's own templates (and a built-in prompt an
author points a step at, named at that `prompt:`): a warning at each line that says a value so.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any, Protocol

from jinja2 import TemplateSyntaxError

from ...errors import ConfigError
from ...scoring.steps import step_kind
from ..source import CatalogSource, Place, span_of
from ..spec import ScorerDefinition
from ..templates import PromptTemplates
from .empty_answer import leaf
from .meanings import Meaning, scale_read
from .trials import Trials
from .value_sayings import Saying, fields_named, filtered_sayings, plain_text, sayings, value_polarities


class ScorerProof(Protocol):
    """What this proof reads of properties.py's ScorerProof."""

    source: CatalogSource
    definition: ScorerDefinition
    trials: Trials
    raw: Any

    @property
    def label(self) -> str: ...
    def warning(self, code: str, message: str, place: Place | None) -> None: ...
    def _is_own(self, place: Place) -> bool: ...


def verdicts_defined_against(proof: ScorerProof) -> None:
    """`verdict-defined-against-meaning` at each line of the author's templates that says a
    value of a judged answer means the opposite of what its schema declares: a judge's prompt
    defining a value of its own step's answer (a built-in prompt the author points a step at
    is named at the author's `prompt:`), or a template listing the answers of one value under
    a heading that says the other (`The hallucinated claims:` over `verdict == 'no'`)."""
    templates: PromptTemplates | None = None
    meanings = proof.trials.meanings
    if not value_polarities(meanings, truths=True) and not any(meaning.ends or meaning.better for meaning in meanings.values()):
        return
    own_folder = proof.source.templates_path[0].resolve()
    for index, step in enumerate(proof.definition.steps):
        written = step_kind(step.kind).sources(step)
        if not written.templates:
            continue
        # A judge's prompt defines the values of its own answer; other templates only list answers.
        own_meanings = {name: meaning for name, meaning in meanings.items() if name.startswith(f"{step.id}.")} if written.schema is not None else {}
        mine = value_polarities(own_meanings)
        scales = {
            name: meaning if meaning.ends is not None else dataclasses.replace(meaning, ends=_bound_ends(step, name.split(".", 1)[1], proof.definition.options))
            for name, meaning in own_meanings.items() if meaning.better is not None
        }
        scales = {name: meaning for name, meaning in scales.items() if meaning.ends is not None}
        schema = f"the answer schema {written.schema.text}" if written.schema is not None else ""
        templates = templates or PromptTemplates(proof.source.templates_path)
        try:
            reached = [reached for template in written.templates for reached in templates.referenced(template.text)]
        except (ConfigError, TemplateSyntaxError):
            continue  # reported by the compiler
        prompt = span_of(proof.raw, ["steps", index, *written.templates[0].at])
        pointed = prompt.start if prompt is not None and proof._is_own(prompt.start) else None
        for name in dict.fromkeys(reached):
            path, text = templates.source(name)
            own = path.resolve().is_relative_to(own_folder)
            if not own and pointed is None:
                continue
            lines = text.splitlines()
            for number, line in enumerate(lines, 1):
                for saying in sayings(line):
                    meant = mine.get(saying.value)
                    if meant is not None and meant != saying.polarity:
                        _warn(proof, step.id, f"the prompt defines \"{saying.value}\" in words that say {saying.polarity}", saying, meant, schema,
                              Place(str(path), number, saying.offset) if own else None, pointed, name, number)
            for field, meaning in scales.items():
                _scale_against(proof, step.id, field, meaning, text, schema, Place(str(path), 0, 0) if own else None, pointed, name)
            for line_index, field, value, saying in filtered_sayings(lines):
                meant = value_polarities(meanings, field, truths=True).get(value)
                if meant is not None and meant != saying.polarity:
                    _warn(proof, step.id, f"the template keeps the answers whose {field} is \"{value}\" under words that say {saying.polarity}", saying, meant, f"the schema of {fields_named(meanings, field)[0]}",
                          Place(str(path), line_index + 1, saying.offset) if own else None, pointed, name, line_index + 1)


def _scale_against(proof: ScorerProof, step: str, field: str, meaning: Meaning, text: str, schema: str, own: Place | None, pointed: Place | None, template: str) -> None:
    """`verdict-defined-against-meaning` where a prompt ties words to a rating's two ends the
    other way round from its schema (`from 1 (very polite) to 5 (rude)` for a rating whose
    greater values are better): the judge rates by the prompt and every score is turned round."""
    assert meaning.ends is not None
    text = _options_shown(text, proof.definition.options)
    read = scale_read(plain_text(text), meaning.ends, one_end=True)
    if read is None or read[0] == meaning.better:
        return
    line = text.count("\n", 0, read[1]) + 1
    low, high = (f"{end:g}" for end in meaning.ends)
    words = text.splitlines()[line - 1].strip()
    said = f"the prompt defines {leaf(field)} from {low} to {high} with {read[0]} values better ({words[:100]!r})"
    if own is None:
        said = f"{template}, which this `prompt:` points the step at, {said.removeprefix('the prompt ')} (line {line})"
    start = read[1] - text.rfind("\n", 0, read[1]) - 1
    proof.warning(
        "verdict-defined-against-meaning",
        f"{proof.label}.{step}: {said}, but {schema} declares {meaning.better} values better: the judge rates by the prompt and the "
        f"score counts by the schema, so each rating counts the other way; make the two agree",
        Place(own.file, line, start + 1) if own is not None else pointed,
    )


def _bound_ends(step: Any, field: str, options: Mapping[str, Any]) -> tuple[float, float] | None:
    """A number field's ends as the step's `bounds:` give them (`minimum: options.min_score`),
    with the options' defaults, where its schema gives none."""
    bounds = getattr(step, "bounds", None)
    bound = bounds.get(field) if isinstance(bounds, Mapping) else None
    ends = []
    for written in (getattr(bound, "minimum", None), getattr(bound, "maximum", None)):
        named = re.fullmatch(r"options\.(\w+)", written) if isinstance(written, str) else None
        declared = options.get(named[1]) if named is not None else None
        value = declared.get("default") if isinstance(declared, Mapping) else written
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return None
        ends.append(float(value))
    return (ends[0], ends[1]) if ends[0] < ends[1] else None


#: An option printed as it is (`{{ options.max_score }}`, `{{ options.min_score | number }}`).
_OPTION_SHOWN = re.compile(r"{{-?\s*options\.(\w+)(?:\s*\|\s*(?:number|int|string))?\s*-?}}")


def _options_shown(text: str, options: Mapping[str, Any]) -> str:
    """`text` with each number option it prints written as its default, as the judge reads it
    (a scale's ends are most often `{{ options.min_score }}` to `{{ options.max_score }}`)."""
    def default(found: re.Match[str]) -> str:
        declared = options.get(found[1])
        value = declared.get("default") if isinstance(declared, Mapping) else None
        return f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else found[0]

    return _OPTION_SHOWN.sub(default, text)


def _warn(proof: ScorerProof, step: str, said: str, saying: Saying, meant: str, schema: str, place: Place | None, pointed: Place | None, template: str, line: int) -> None:
    """The warning at the template's line, or (a template not the author's to change) at the
    author's `prompt:` that points the step at it."""
    consequence = (
        "the judge answers by the prompt and the score counts by the schema, so each such verdict counts the other way"
        if said.startswith("the prompt") else "the text names the answers of the other meaning"
    )
    if place is None:
        said = f"{template}, which this `prompt:` points the step at, {said.removeprefix('the prompt ').removeprefix('the template ')} (line {line})"
        place = pointed
    proof.warning(
        "verdict-defined-against-meaning",
        f"{proof.label}.{step}: {said} ({saying.words[:80]!r}), but {schema} gives \"{saying.value}\" the meaning {meant}: {consequence}; make the two agree",
        place,
    )

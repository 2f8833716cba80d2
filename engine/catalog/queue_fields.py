"""A review queue whose labels cannot be compared with the judge's answers as meant: one that
hides from its reviewers a field its scorer's judge reads (people told to label the judge's
answers, each claim against the context, say, decide without what the judge saw, so their
labels measure a guess against it; named at the queue's `show:`), and one whose `choices:`
offer a value the field they label never holds (named at that choice), one whose `text:`
shows each answer's other field than what it judges (the judge's reason for the claim), and one whose
`instructions:` tell reviewers a value means the opposite of what the judged field's schema
declares (`"yes" when it is made up` where "yes" is good: people label the other way from
the judge, and agreement is measured backwards; named at that value in the instructions).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from pydantic import ValidationError

from ..errors import ConfigError
from ..scoring.plan import ScorerPlan
from .proving.meanings import Meaning, schema_meanings
from .proving.value_sayings import fields_named, sayings, swapped_definitions, value_polarities
from .silencing import marked
from .source import CatalogSource, place_in, position, span_of
from .warning import CatalogWarning

#: The item's fields a queue may show but need not: metadata may hold a label.
_NEVER_NEEDED = frozenset({"metadata"})


def fields_hidden(source: CatalogSource, plan_of: Callable[[str], ScorerPlan | None]) -> Iterator[ConfigError]:
    """A warning at each queue's written `show:` that leaves out a field of the item that
    the judge steps of its scorer read (every step of a scorer that asks no judge: people
    then check what it computed from them)."""
    from .queues import FIELDS

    queues = source.data.get("queues")
    for name, queue in queues.items() if isinstance(queues, Mapping) else ():
        shown = queue.get("show") if isinstance(queue, Mapping) else None
        plan = plan_of(str(queue.get("scorer", ""))) if isinstance(shown, list) else None
        if plan is None or not isinstance(shown, list):
            continue
        judged = [step for step in plan.steps if step.sampling is not None]
        who = "judge" if judged else "computation"
        judged = judged or list(plan.steps)
        hidden = [field for field in FIELDS if field not in shown and field not in _NEVER_NEEDED and any(field in step.reads for step in judged)]
        if not hidden:
            continue
        readers = [step.id for step in judged if hidden[0] in step.reads]
        steps = f"step{'s' if len(readers) > 1 else ''} {', '.join(readers)}"
        place = position(queues, [name, "show"], value=True)
        yield CatalogWarning(
            f"queues.{name}.show: leaves out {', '.join(f'`{field}`' for field in hidden)}, which {plan.id}'s {who} reads ({steps}): "
            f"reviewers labelling its answers decide without what the {who} saw; add {'it' if len(hidden) == 1 else 'them'} to `show:`",
            *(place or (str(source.path), None, None)), code="queue-hides-field",
        )


def choices_not_values(source: CatalogSource, plan_of: Callable[[str], ScorerPlan | None]) -> Iterator[ConfigError]:
    """A warning at each of a queue's `steps.choices` that is not a value of the answer field
    it labels (`judged:`), for a scorer of the catalog or a built-in one. Choices none of which
    is a value, or differing from one only by case, are a problem of queues.py already."""
    from .queues import StepLabels, judged_values

    queues = source.data.get("queues")
    for name, queue in queues.items() if isinstance(queues, Mapping) else ():
        written = queue.get("steps") if isinstance(queue, Mapping) else None
        plan = plan_of(str(queue.get("scorer", ""))) if isinstance(written, Mapping) else None
        try:
            labels = StepLabels.model_validate(written) if plan is not None else None
        except ValidationError:
            continue  # said by queues.py
        step = next((step for step in plan.steps if labels is not None and step.id == labels.step), None) if plan is not None else None
        values = [str(value) for value in judged_values(step.answer_model, labels) or []] if step is not None else []
        if labels is None or not values or not any(choice in values for choice in labels.choices):
            continue
        folded = {value.casefold() for value in values}
        missing = [value for value in values if value not in labels.choices]
        if missing and all(choice in values for choice in labels.choices):
            yield _value_left_out(source, name, str(labels.judged), values, missing)
            continue
        for index, choice in enumerate(labels.choices):
            if choice in values or choice.casefold() in folded:
                continue
            unoffered = f"; and {', '.join(map(repr, missing))}, which the judge may answer, is no choice" if missing else ""
            place = position(queues, [name, "steps", "choices", index], value=True)
            yield CatalogWarning(
                f"queues.{name}.steps.choices: {choice!r} is not a value of `{labels.judged}`, the field it labels ({', '.join(map(repr, values))}): "
                f"a reviewer's {choice!r} never agrees with the judge's answer{unoffered}; offer the field's own values",
                *(place or (str(source.path), None, None)), code="choice-not-a-value",
            )


def _value_left_out(source: CatalogSource, queue: str, field: str, values: list[str], missing: list[str]) -> ConfigError:
    """The warning at a queue's `choices:` that offers only some of the values its field holds:
    an answer the judge gave one of the others is one no reviewer can agree with, so the
    agreement the queue measures is lowered by every such answer, not by the judge's mistakes."""
    place = position(source.data["queues"], [queue, "steps", "choices"], value=True)
    left_out = ", ".join(map(repr, missing))
    return CatalogWarning(
        f"queues.{queue}.steps.choices: leaves out {left_out}, which `{field}` may hold ({', '.join(map(repr, values))}): "
        f"a reviewer can never agree with an answer the judge gave {left_out}, so agreement is measured low on each; offer every value of the field",
        *(place or (str(source.path), None, None)), code="choice-left-out",
    )


def text_not_what_is_judged(source: CatalogSource, plan_of: Callable[[str], ScorerPlan | None]) -> Iterator[ConfigError]:
    """A warning at a queue's `steps.text` that shows reviewers another field of each answer
    than the one the step copies from an earlier step's list (`verdicts[].statement: {enum:
    preprocess.claims}`): the claim each verdict judges, which people are there to label;
    `text: reason` shows them the judge's own words about it instead."""
    from .queues import StepLabels

    queues = source.data.get("queues")
    for name, queue in queues.items() if isinstance(queues, Mapping) else ():
        written = queue.get("steps") if isinstance(queue, Mapping) else None
        plan = plan_of(str(queue.get("scorer", ""))) if isinstance(written, Mapping) and "text" in written else None
        try:
            labels = StepLabels.model_validate(written) if plan is not None else None
        except ValidationError:
            continue  # said by queues.py
        step = next((step for step in plan.steps if labels is not None and step.id == labels.step), None) if plan is not None else None
        if labels is None or step is None or labels.text is None:
            continue
        entry = f"{labels.field}[]."
        copied = sorted({
            bound.path.removeprefix(entry) for bound in getattr(step, "bounds", ())
            if bound.keyword == "enum" and bound.path.startswith(entry) and not isinstance(bound.value, (int, float, list, tuple))
        })
        if len(copied) != 1 or labels.text in copied or "." in copied[0]:
            continue
        place = position(queues, [name, "steps", "text"], value=True)
        yield CatalogWarning(
            f"queues.{name}.steps.text: shows reviewers each answer's `{labels.text}`, but what each of {queue.get('scorer')}'s {labels.answers} judges is "
            f"its `{copied[0]}`, copied from the step's earlier list: people label the judge's own words instead of what it judged; "
            f"write `text: {copied[0]}`",
            *(place or (str(source.path), None, None)), code="queue-shows-other-field",
        )


def instructions_against_meaning(source: CatalogSource) -> Iterator[ConfigError]:
    """A warning at each value a queue's `instructions:` tie to words that say good where the
    schema of the field its `steps:` label (`judged:`) declares the value bad, or the reverse."""
    from .queues import StepLabels

    queues = source.data.get("queues")
    for name, queue in queues.items() if isinstance(queues, Mapping) else ():
        instructions = queue.get("instructions") if isinstance(queue, Mapping) else None
        written = queue.get("steps") if isinstance(queue, Mapping) else None
        if not isinstance(instructions, str) or not isinstance(written, Mapping):
            continue
        try:
            labels = StepLabels.model_validate(written)
        except ValidationError:
            continue  # said by queues.py
        key = position(queues, [name, "instructions"])
        if key is not None and marked(key.file, key.line, "verdict-defined-against-meaning"):
            continue  # a comment cannot sit inside the text: the key's line silences what is found in it
        meanings = _meanings_of(source, str(queue.get("scorer", "")), labels.step)
        polarities = value_polarities({key: meaning for key, meaning in meanings.items() if key.startswith(f"{labels.answers}[].")}, labels.judged)
        swapped = _swapped(meanings, labels.answers, labels.judged, instructions) if labels.judged else None
        if swapped is not None:
            first, second, clauses = swapped
            span = span_of(queues, [name, "instructions"])
            # At the first of the two definitions, which a folded text may carry to another line.
            place = place_in(span, pattern=rf"([\"'`]{re.escape(first)}[\"'`])\s*(?:when|if|means|:)") if span else position(queues, [name, "instructions"], value=True)
            yield CatalogWarning(
                f"queues.{name}.instructions: tell reviewers \"{first}\" and \"{second}\" each in the words the {labels.judged} they label "
                f"gives the other ({first!r}: {clauses[first]!r}; {second!r}: {clauses[second]!r}): people answer the one where the judge "
                "answers the other, and their agreement with it is measured on crossed labels; swap the two definitions",
                *(place or (str(source.path), None, None)), code="verdict-defined-against-meaning",
            )
        for saying in sayings(instructions):
            meant = polarities.get(saying.value)
            if meant is None or meant == saying.polarity:
                continue
            span = span_of(queues, [name, "instructions"])
            before = len(re.findall(rf"[\"'`]{re.escape(saying.value)}[\"'`]", instructions[: saying.offset - 1]))
            # At the words that give the value its meaning, which a folded text may carry to the next line.
            content = [word for word in saying.words.split() if word.lower() not in _ARTICLES] or saying.words.split()
            first = re.escape(content[0]) if content else ""
            place = place_in(span, pattern=rf"(?:[\"'`]{re.escape(saying.value)}[\"'`][\s\S]*?){{{before}}}[\"'`]{re.escape(saying.value)}[\"'`][\s\S]*?({first})") if span else None
            yield CatalogWarning(
                f"queues.{name}.instructions: tell reviewers \"{saying.value}\" means {saying.polarity} ({saying.words[:80]!r}), but the {labels.judged} "
                f"they label, {queue.get('scorer')}'s {labels.answers}, declares \"{saying.value}\" {meant}: people label the other way from the judge "
                "and their agreement with it is measured backwards; make the instructions say what the schema means",
                *(place or position(queues, [name, "instructions"], value=True) or (str(source.path), None, None)), code="verdict-defined-against-meaning",
            )


def _swapped(meanings: Mapping[str, Meaning], answers: str, judged: str, text: str) -> tuple[str, str, Mapping[Any, str]] | None:
    """Two values the text defines in each other's words, by the description of the field it labels."""
    for name in fields_named({key: meaning for key, meaning in meanings.items() if key.startswith(f"{answers}[].")}, judged):
        clauses = meanings[name].clauses or {}
        pair = swapped_definitions(text, clauses)
        if pair is not None:
            return pair[0], pair[1], clauses
    return None


#: Words that open what a text says of a value without saying anything yet.
_ARTICLES = frozenset("the a an it its this that".split())


def _meanings_of(source: CatalogSource, scorer: str, step: str) -> Mapping[str, Meaning]:
    """The meanings the answer schema of a scorer's step declares (or its words say)."""
    try:
        raw = source.raw_definition(scorer)
    except ConfigError:
        return {}
    steps = raw.get("steps") if isinstance(raw, Mapping) else None
    spec = next((entry for entry in steps or [] if isinstance(entry, Mapping) and entry.get("id") == step), None)
    schema = source.schema_file(str(spec.get("schema"))) if isinstance(spec, Mapping) and spec.get("schema") else None
    return schema_meanings(schema, step) if schema is not None else {}


#: Instructions telling reviewers when to flag an item: "flag it only when most of its
#: statements are toxic" (many), "flag it as soon as one is" (one).
_FLAG_WHEN = re.compile(
    r"\bflag\w*\s+(?:it|them|the\s+\w+|an?\s+\w+)?\s*(?:only\s+)?(?:when|if|as\s+soon\s+as)\s+(?P<how>most|all|every|the\s+majority|more\s+than\s+half|any|one|a\s+single|at\s+least\s+one)\b",
    re.IGNORECASE,
)


def flagging_against_pass_line(source: CatalogSource, plan_of: Callable[[str], ScorerPlan | None]) -> Iterator[ConfigError]:
    """A warning where a queue's instructions tell reviewers to flag an item on another count of
    bad answers than the scorer's pass line flags it: "only when most of its statements are
    toxic" beside a pass line that one toxic statement fails. People's pass or flag is then
    compared with the judge's under two rules, and the calibration moves the line to theirs."""
    from .proving.trials import run_trials
    from .queues import StepLabels

    queues = source.data.get("queues")
    for name, queue in queues.items() if isinstance(queues, Mapping) else ():
        instructions = queue.get("instructions") if isinstance(queue, Mapping) else None
        said = _FLAG_WHEN.search(instructions) if isinstance(instructions, str) else None
        plan = plan_of(str(queue.get("scorer", ""))) if said is not None else None
        try:
            labels = StepLabels.model_validate(queue.get("steps")) if plan is not None else None
        except ValidationError:
            continue
        if labels is None or said is None or plan is None or not labels.judged:
            continue
        meanings: dict[str, Meaning] = {}
        for step in plan.steps:
            meanings |= _meanings_of(source, plan.id, step.id)
        trials = run_trials(plan, {}, meanings)
        one = trials.named(f"worse {labels.answers}[].{labels.judged} 1") if trials is not None else None
        if one is None or one.score is None:
            continue
        flagged = not plan.pass_line.passes(one.score)
        many = said["how"].lower().split()[-1] not in ("any", "one", "single")
        if flagged != many:
            continue
        span = span_of(queues, [name, "instructions"])
        place = place_in(span, pattern=re.escape(said.group(0))) if span else position(queues, [name, "instructions"], value=True)
        yield CatalogWarning(
            f"queues.{name}.instructions: tell reviewers {said.group(0)!r} (a count of bad {labels.judged}s), but {plan.id}'s pass line "
            f"{'flags' if flagged else 'passes'} an answer with one bad {labels.judged} of three (it scores {one.score:g}): people and the judge "
            "flag by two rules, and their agreement measures the rule, not the judge; make the instructions say what the pass line does",
            *(place or (str(source.path), None, None)), code="flag-rule-against-pass-line",
        )

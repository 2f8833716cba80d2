"""What a scorer's description says each answer scores, held to what it does score. A
description such as "1 when the reply reveals no personal data, 0 when it reveals some" or "a
claim the context supports counts 1, one it does not mention counts half, one it contradicts
0" ties numbers to conditions. Each answer the score tells apart (a classifier's label with
its description, a verdict with what its schema says of it) is matched to the condition that
reads most like it, the one matching of them all that is clearly the closest, and a score
other than the number tied to its condition is named where the score is given (the label's
`score:`, the value that counts the verdict): the credit went to another answer.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from ..source import Place, position
from .empty_answer import ScorerProof, leaf

#: A number, then the condition it is given for: `1 when the reply ...`, `0 if it ...`.
_NUMBER_WHEN = re.compile(r"(?<![\w.])(?P<number>\d+(?:\.\d+)?|half|full)\s+(?:when|if|for|means)\s+(?P<condition>[^,;.:]+)", re.IGNORECASE)
#: A condition, then what it counts: `a claim the context supports counts 1`, and in a list
#: of them a bare number closing an entry: `..., one it contradicts 0.`
_COUNTS_NUMBER = re.compile(
    r"(?:^|[,;:]\s*(?:and\s+)?)(?P<condition>[^,;.:]+?)\s+(?:(?:counts?|scores?|gets?|earns?|is\s+worth)\s+(?P<number>\d+(?:\.\d+)?|half|full|nothing)|(?P<bare>\d+(?:\.\d+)?)(?=\s*(?:[.;]|$)))",
    re.IGNORECASE | re.MULTILINE,
)
_NUMBER_WORDS = {"half": 0.5, "full": 1.0, "nothing": 0.0}
#: Words that say nothing of which answer is meant, and words that turn a condition round.
_FILLER = frozenset("a an the it its of to in on and or is are be that this one any some reply output answer claim claims".split())
_NEGATIONS = frozenset("no not none never without nothing neither nor isn't doesn't don't cannot".split())
#: How much clearer than the next best the matching chosen must be (a similarity of 0 to 100
#: per answer, summed).
_CLEARLY = 20.0


@dataclass(frozen=True)
class _Answer:
    """An answer the score tells apart: how it is named, what it says, what it scores and
    where that score is given."""

    name: str
    text: str
    score: float
    place: Place | None
    #: What a message quotes of it (the text, without the name).
    shown: str = ""


def scores_against_description(proof: ScorerProof) -> None:
    """`score-against-description` at each answer whose score is not the number the scorer's
    description ties to the condition that clearly matches it."""
    conditions = _conditions(proof.definition.description or "")
    if len({number for number, _ in conditions}) < 2:
        return
    for answers in (_option_entries(proof), _field_values(proof)):
        if 2 <= len(answers) <= 6 and len(conditions) <= 6:
            _held(proof, answers, conditions)


def _conditions(description: str) -> list[tuple[float, str]]:
    plain = re.sub(r"\s*\([^()]*\)", "", " ".join(description.split()))
    found: dict[str, float] = {}
    for pattern in (_NUMBER_WHEN, _COUNTS_NUMBER):
        for match in pattern.finditer(plain):
            number = match["number"] or match.groupdict().get("bare") or ""
            condition = match["condition"].strip()
            value = _NUMBER_WORDS.get(number.lower()) if number.lower() in _NUMBER_WORDS else float(number)
            if value is not None and len(_words(condition)) >= 2:
                found.setdefault(condition, value)
    return [(number, condition) for condition, number in found.items()]


def _option_entries(proof: ScorerProof) -> list[_Answer]:
    """A list option's entries the author wrote, each with a score and words (a classifier's
    labels): what the judge picks from, and what each scores."""
    own = proof.source.scorers.get(proof.definition.id)
    options = own.get("options") if isinstance(own, Mapping) else None
    for name, declared in options.items() if isinstance(options, Mapping) else ():
        # An option given as its value (`labels: [...]`) or with a default (`labels: {default: [...]}`).
        default, at = (declared.get("default"), ["default"]) if isinstance(declared, Mapping) else (declared, [])
        holder = declared if at else options
        entries = [entry for entry in default if isinstance(entry, Mapping)] if isinstance(default, list) else []
        answers = [
            _Answer(str(entry.get("label", index)), _entry_words(entry), float(entry["score"]),
                    position(holder, [*(at or [name]), index, "score"], value=True), str(entry.get("description") or ""))
            for index, entry in enumerate(entries) if isinstance(entry.get("score"), (int, float)) and not isinstance(entry.get("score"), bool)
        ]
        if len(answers) >= 2:
            return answers
    return []


def _entry_words(entry: Mapping[str, Any]) -> str:
    """What an entry says of the answer it stands for: its description when it has one, since
    a label such as "no" would read as a negation of it; else all it holds but its score."""
    if isinstance(entry.get("description"), str) and entry["description"].strip():
        return str(entry["description"])
    return " ".join(str(value) for key, value in entry.items() if key != "score")


def _field_values(proof: ScorerProof) -> list[_Answer]:
    """The values of the one choice field the score reads, each with what its schema says of
    it and what the score is when every answer holds it."""
    fields = list(proof.trials.fields)
    meaning = proof.trials.meanings.get(fields[0]) if len(fields) == 1 else None
    if meaning is None or not meaning.clauses:
        return []
    name = fields[0]
    answers: list[_Answer] = []
    for index, value in enumerate(proof.trials.fields[name]):
        trial = proof.trials.named("first values" if index == 0 else f"values ({index},)")
        said = meaning.clauses.get(value)
        if trial is None or trial.score is None or not said:
            return []
        answers.append(_Answer(f"{leaf(name)} {value!r}" if isinstance(value, str) else f"{leaf(name)} {value}", said, float(trial.score), _giver(proof, name)))
    return answers


def _giver(proof: ScorerProof, name: str) -> Place | None:
    """Where the author's own score gives the field `name` its credit: a value of theirs
    whose `value:` or `where:` reads it (an extension's `value: "{'yes': 1, 'no': 0.5}...`"),
    else where the score reads the field."""
    values = proof._score_raw().get("values")
    for value_name, value in values.items() if isinstance(values, Mapping) else ():
        for key in ("value", "where"):
            place = position(value, [key], value=True) if isinstance(value, Mapping) and leaf(name) in str(value.get(key, "")) else None
            if place is not None and proof._is_own(place):
                return place
    return proof._reader_of(name)


def _held(proof: ScorerProof, answers: list[_Answer], conditions: list[tuple[float, str]]) -> None:
    ranked = sorted(_matchings(answers, conditions), key=lambda pair: -pair[0])
    if not ranked or (len(ranked) > 1 and ranked[0][0] - ranked[1][0] < _CLEARLY):
        return
    scale = proof.range[1] if proof.range is not None and proof.range[1] > 1 else 1.0
    for answer, (number, condition) in zip(answers, ranked[0][1]):
        if any(math.isclose(answer.score, wanted, abs_tol=1e-6) for wanted in (number, number * scale)):
            continue
        if answer.place is None or not proof._is_own(answer.place):
            continue  # the credit is the base scorer's, not the author's to change
        proof.warning(
            "score-against-description",
            f"{proof.label}: {answer.name} ({(answer.shown or answer.text)[:80]!r}) scores {answer.score:g}, but the scorer's description gives {number:g} "
            f"to {condition!r}, which is what it says: the credit went to another answer; give it {number:g}, or make the description say what it scores",
            answer.place,
        )


def _matchings(answers: list[_Answer], conditions: list[tuple[float, str]]) -> Iterator[tuple[float, tuple[tuple[float, str], ...]]]:
    """Each way of giving every answer a condition of its own that is not turned round from
    it (a negation on one side only), with how well it reads."""
    for chosen in itertools.permutations(conditions, len(answers)):
        if any(_turned(answer.text, condition) for answer, (_, condition) in zip(answers, chosen)):
            continue
        yield sum(float(fuzz.token_set_ratio(_content(answer.text), _content(condition))) for answer, (_, condition) in zip(answers, chosen)), chosen


def _turned(text: str, condition: str) -> bool:
    return bool(set(_words(text)) & _NEGATIONS) != bool(set(_words(condition)) & _NEGATIONS)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z']+", text.lower())


def _content(text: str) -> str:
    return " ".join(word for word in _words(text) if word not in _FILLER and word not in _NEGATIONS)


#: A description saying some items are left unscored.
_NOT_SCORED = re.compile(r"\b(?:is|are|left|counts? as|stays?)\s+(?:not\s+scorable|unscored|not\s+scored)\b|\bnot\s+scorable\b", re.IGNORECASE)


def skip_scored_against_description(proof: ScorerProof) -> None:
    """`skip-scored` at a step's `on_skip:` number when the scorer's description says the items
    skipped are left not scorable: each such item gets that number as its score (the best end,
    and it passes) instead of staying out of the run's figures."""
    said = _NOT_SCORED.search(proof.definition.description or "")
    steps = proof.raw.get("steps") if isinstance(proof.raw, Mapping) else None
    if said is None or not isinstance(steps, list):
        return
    for index, step in enumerate(steps):
        skipped = step.get("on_skip") if isinstance(step, Mapping) else None
        if not isinstance(skipped, (int, float)) or isinstance(skipped, bool) or "skip_if" not in step:
            continue
        ends = proof.range
        best = "" if ends is None else " (the best score)" if skipped == (ends[1] if proof.plan.direction == "higher_is_better" else ends[0]) else ""
        proof.warning("skip-scored", (
            f"{proof.label}.steps.{step.get('id')}.on_skip: {skipped:g} is the score of every item the step skips{best}, but the scorer's "
            f"description says such items are not scored ({said.group(0)!r}): they count in the mean and the pass rate as if judged; "
            f"write `on_skip: {{not_scorable: \"why\"}}`"
        ), proof.at("steps", index, "on_skip"))

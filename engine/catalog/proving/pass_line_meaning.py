"""A pass line that passes answers its schema's meanings call bad: a `threshold:` on the
wrong side of the scale (0.9 on a lower-is-better share of bad verdicts, meant as "90%
good") passes an answer whose verdicts are mostly bad. Proved on the trials of one scorer
(a part of properties.py's ScorerProof), named at the author's `threshold:`: the scorer's, a
jury's (each judge votes against it) or a cascade's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ...scoring.pass_line import PassLine, scale_of
from ..setting_checks import comment_at
from ..source import Place
from .empty_answer import ScorerProof, better_word, leaf
from .truth_table import answer_in_short


#: The pass lines an author writes: the scorer's, a jury's (each judge's vote) and a cascade's.
_LINES = (("threshold",), ("judges", "threshold"), ("cascade", "threshold"))


def pass_line_against_meaning(proof: ScorerProof) -> None:
    """`pass-line-against-meaning`: a pass line the author wrote (the scorer's, a jury's or
    a cascade's) passes the answer with every verdict bad, or one with most of its verdicts
    bad (2 of 3)."""
    scorers = proof.plan.pass_line.on_scale(scale_of(proof.plan.options_model()))
    for loc in _LINES:
        written = _written(proof.raw, loc)
        place = proof.at(*loc)
        if written is None or place is None or not proof._is_own(place):
            continue
        line = scorers if loc == ("threshold",) else scorers.overridden(written)
        if loc == ("threshold",) and line.set_by != "definition":
            continue
        _held_to_meaning(proof, line, ".".join(loc), place)


def _written(raw: Any, loc: tuple[str, ...]) -> float | None:
    node = raw
    for key in loc:
        node = node.get(key) if isinstance(node, Mapping) else None
    return float(node) if isinstance(node, (int, float)) and not isinstance(node, bool) else None


def _held_to_meaning(proof: ScorerProof, line: PassLine, setting: str, place: Place) -> None:
    if proof.range is None:
        return
    low, high = proof.range
    if high - low >= 10 and low < line.value < low + 1 and line.value != int(line.value):
        return  # a fraction of a wide scale: `fraction-on-scale` says so at the same line, with the value meant
    meanings = {name: meaning for name, meaning in proof.trials.meanings.items() if name in proof.trials.fields}
    for label, how in [("all bad", "every"), *((f"worse {name} 2", "most") for name in meanings if "[]" in name)]:
        trial = proof.trials.named(label)
        if trial is None or trial.score is None or not line.passes(trial.score):
            continue
        name = next(iter(meanings)) if how == "every" else label.removeprefix("worse ").removesuffix(" 2")
        mirrored = low + high - line.value
        hint = f"; did you mean {mirrored:g}?" if not line.overridden(mirrored).passes(trial.score) else ""
        higher = proof.plan.direction == "higher_is_better"
        proof.warning(
            "pass-line-against-meaning",
            f"{proof.label}.{setting}: {line.value:g} passes an answer with {how} {leaf(name)}{'s' if how == 'most' else ''} {proof._bad_value(meanings[name])} "
            f"({answer_in_short(trial)}: score {trial.score:g}), on a score where {better_word(higher)} is better: the line is on the "
            f"side of the bad answers{hint}",
            place,
        )
        return


#: A comment saying which ratings pass or fail: "a rating of 4 or 5 passes", "a 4 out of 5 or
#: better passes", "rated 4 or more passes", "3 and below fail".
_RATINGS_SAID = re.compile(
    r"\b(?:(?:a\s+)?(?:rating|score|grade|mark)s?\s+of|rated|an?|gets?|given)\s+(?P<listed>\d+(?:\s*(?:,|or|and)\s*\d+)*)(?:\s+out\s+of\s+\d+)?"
    r"(?P<upward>\s+(?:or\s+(?:better|more|higher|above)|and\s+(?:up|above|over)))?[^.;\d]{0,20}?\b(?P<verb>pass|fail)"
    r"|\b(?P<edge>\d+)\s+(?:and|or)\s+(?P<side>below|under|lower|less|above|over|higher|more|up)\s+(?P<verb2>pass|fail)",
    re.IGNORECASE,
)


def pass_line_against_comment(proof: ScorerProof) -> None:
    """`pass-line-against-comment`: the comment of the author's own pass line says a rating
    passes (or fails) that the scorer, run on an answer giving that rating, fails (or passes):
    "a rating of 4 passes" at 0.8, where the score makes a 4 of 1 to 5 into 0.75."""
    written, place = _written(proof.raw, ("threshold",)), proof.at("threshold")
    numbers = [name for name, domain in proof.trials.fields.items() if domain and all(isinstance(value, int) and not isinstance(value, bool) for value in domain)]
    if written is None or place is None or not proof._is_own(place) or len(numbers) != 1:
        return
    said = comment_at(proof.raw, "threshold")
    line = proof.plan.pass_line.on_scale(scale_of(proof.plan.options_model()))
    for rating, passes in _ratings_said(said, proof.trials.fields[numbers[0]]):
        trial = next((trial for trial in proof.trials.trials if trial.score is not None and _rating_of(trial.answers, numbers[0]) == rating), None)
        if trial is None or trial.score is None or line.passes(trial.score) == passes:
            continue
        proof.warning("pass-line-against-comment", (
            f"{proof.label}.threshold: {written:g} {'fails' if passes else 'passes'} an answer rated {rating} (it scores {trial.score:g}), but "
            f"the comment says a {rating} {'passes' if passes else 'fails'} ({said!r}): write the line the comment means, at or "
            f"{'below' if passes == (proof.plan.direction == 'higher_is_better') else 'above'} {trial.score:g}"
        ), place)
        return


def _ratings_said(said: str, domain: list[Any]) -> Iterator[tuple[int, bool]]:
    """Each rating of `domain` the comment says passes (True) or fails (False)."""
    for found in _RATINGS_SAID.finditer(said):
        if found["listed"]:
            listed = [int(number) for number in re.findall(r"\d+", found["listed"])]
            for number in [value for value in domain if value >= min(listed)] if found["upward"] else listed:
                yield int(number), found["verb"].lower() == "pass"
        else:
            edge, up = int(found["edge"]), found["side"].lower() in ("above", "over", "higher", "more", "up")
            for value in domain:
                if (value >= edge) if up else (value <= edge):
                    yield int(value), found["verb2"].lower() == "pass"


def _rating_of(answers: Mapping[str, Any], name: str) -> Any:
    """The value an answer gives the field `name` (`rate.rating`), when it gives one."""
    step, _, field = name.partition(".")
    answer = answers.get(step)
    return answer.get(field) if isinstance(answer, Mapping) and "[]" not in field and "." not in field else None

"""A pass line that passes answers its schema's meanings call bad: a `threshold:` on the
wrong side of the scale (0.9 on a lower-is-better share of bad verdicts, meant as "90%
good") passes an answer whose verdicts are mostly bad. Proved on the trials of one scorer
(a part of properties.py's ScorerProof), named at the author's `threshold:`: the scorer's, a
jury's (each judge votes against it) or a cascade's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...scoring.pass_line import PassLine, scale_of
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

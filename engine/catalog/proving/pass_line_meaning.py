"""A pass line that passes answers its schema's meanings call bad: a `threshold:` on the
wrong side of the scale (0.9 on a lower-is-better share of bad verdicts, meant as "90%
good") passes an answer whose verdicts are mostly bad. Proved on the trials of one scorer
(a part of properties.py's ScorerProof), named at the author's `threshold:`.
"""

from __future__ import annotations

from ...scoring.pass_line import scale_of
from .empty_answer import ScorerProof, better_word, leaf
from .truth_table import answer_in_short


def pass_line_against_meaning(proof: ScorerProof) -> None:
    """`pass-line-against-meaning`: the scorer's own pass line passes the answer with every
    verdict bad, or one with most of its verdicts bad (2 of 3)."""
    line = proof.plan.pass_line.on_scale(scale_of(proof.plan.options_model()))
    place = proof.at("threshold")
    if line.set_by != "definition" or place is None or not proof._is_own(place) or proof.range is None:
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
            f"{proof.label}.threshold: {line.value:g} passes an answer with {how} {leaf(name)}{'s' if how == 'most' else ''} {proof._bad_value(meanings[name])} "
            f"({answer_in_short(trial)}: score {trial.score:g}), on a score where {better_word(higher)} is better: the line is on the "
            f"side of the bad answers{hint}",
            place,
        )
        return

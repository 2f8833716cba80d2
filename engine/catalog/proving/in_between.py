"""An in-between value scored out of order: a verdict whose meaning is neither good nor bad
(`"unsure": neutral`, `"partial": neutral`) that scores worse than the bad one, or better than
the good one (partial credit written against "no" while "unsure" gets 0): a worse answer then
scores better. Named where the score reads the field.
"""

from __future__ import annotations

from collections.abc import Mapping

from .empty_answer import ScorerProof, better_word, leaf
from .meanings import Meaning
from .trials import Trial


def in_between_out_of_order(proof: ScorerProof, meanings: Mapping[str, Meaning], best: Trial) -> bool:
    """A warning where the score reads a field with an in-between value when every answer in
    between (the other fields good) scores beyond all good, or beyond the same answers with the
    field bad; False (nothing said) otherwise."""
    higher = proof.plan.direction == "higher_is_better"
    for name, meaning in meanings.items():
        between, bad = proof.trials.named(f"neutral {name}"), proof.trials.named(f"bad {name}")
        if between is None or bad is None or between.score is None or bad.score is None or best.score is None:
            continue
        below, above = (bad.score, best.score) if higher else (best.score, bad.score)
        if below <= between.score <= above:
            continue
        neutral = next(value for value, polarity in (meaning.polarities or {}).items() if polarity == "neutral")
        past_bad = (between.score < bad.score) if higher else (between.score > bad.score)
        other, other_score = (proof._bad_value(meaning), bad.score) if past_bad else (proof._good_value(meaning), best.score)
        proof.warning(
            "in-between-out-of-order",
            f"{proof.label}.score: every {leaf(name)} {meaning.described(neutral)} scores {between.score:g}, "
            f"{'worse' if past_bad else 'better'} than every {leaf(name)} {other} ({other_score:g}), on a score where {better_word(higher)} is better: "
            f"an answer in between scores {'worse than a bad' if past_bad else 'better than a good'} one; give {meaning.described(neutral).split(' ')[0]} "
            f"a score between the good value's and the bad value's (is its credit given to another value?)",
            proof._reader_of(name),
        )
        return True
    return False

"""A `meaning:` that its own field's description contradicts: `meaning: {"yes": bad, "no":
good}` copied from another schema beside the description `"yes" when the context supports the
claim`. The judge answers by the description (and the prompt), the score's `direction:` was
written by it too, and only the meaning is the other way: a score moving against its direction
by that meaning is the meaning's mistake, named at the `meaning:` line rather than at
`direction:` and at the expression that counts the answers.
"""

from __future__ import annotations

from .empty_answer import ScorerProof, better_word, leaf
from .meanings import Meaning


def meaning_against_description(proof: ScorerProof, name: str, meaning: Meaning, moves: str) -> bool:
    """The problem at the `meaning:` of field `name` when its description says each value
    means the opposite and the score, read by the description, goes with `direction:`; False
    (nothing said) otherwise."""
    described = meaning.description_says
    if not meaning.declared or described is None or not meaning.against_description() or meaning.place is None:
        return False
    higher = proof.plan.direction == "higher_is_better"
    declared = ", ".join(f"{meaning.described(value)}" for value in meaning.polarities or {})
    proof._finding(
        True, "score-against-meaning",
        f"{proof.label}: {leaf(name)}'s `meaning:` declares {declared}, but its own description says the opposite "
        f"({described.evidence}); read by the description the score goes with `direction: {proof.plan.direction}`, by the declared "
        f"meaning against it ({moves.replace(', as its schema declares', '')}; {better_word(higher)} is better): swap the meaning's good and bad",
        meaning.place,
    )
    return True

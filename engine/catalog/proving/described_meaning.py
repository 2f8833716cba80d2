"""A `meaning:` that its own field's description contradicts: `meaning: {"yes": bad, "no":
good}` copied from another schema beside the description `"yes" when the context supports the
claim`. The judge answers by the description (and the prompt), the score's `direction:` was
written by it too, and only the meaning is the other way: a score moving against its direction
by that meaning is the meaning's mistake, named at the `meaning:` line rather than at
`direction:` and at the expression that counts the answers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from .empty_answer import ScorerProof, better_word, leaf
from .meanings import Meaning, polarity_of_words


def meaning_against_description(proof: ScorerProof, name: str, meaning: Meaning, moves: str) -> bool:
    """The problem at the `meaning:` of field `name` when its description says each value
    means the opposite and the score, read by the description, goes with `direction:`; False
    (nothing said) otherwise."""
    described = meaning.description_says
    if not meaning.declared or described is None or not meaning.against_description() or meaning.place is None:
        return False
    higher = proof.plan.direction == "higher_is_better"
    declared = meaning.declared_as()
    fix = f"write `meaning: {described.better}_is_better`" if meaning.better and described.better else "swap the meaning's good and bad"
    proof._finding(
        True, "score-against-meaning",
        f"{proof.label}: {leaf(name)}'s `meaning:` declares {declared}, but its own description says the opposite "
        f"({described.evidence.rstrip('.')}); read by the description the score goes with `direction: {proof.plan.direction}`, by the declared "
        f"meaning against it ({moves.replace(', as its schema declares', '')}; {better_word(higher)} is better): {fix}",
        meaning.place,
    )
    return True


def description_against_name(proof: ScorerProof, name: str, meaning: Meaning) -> bool:
    """The warning at the description of a yes-or-no field, when nothing is declared, the
    description says true is the bad end (`on_topic`: "true when the sentence strays") and the
    field's own name says true is the good one, as the score counts it: the description is
    the odd one out, and the judge, who reads it, answers each value the other way. False
    (nothing said) when the name says nothing or agrees with the description."""
    polarities = meaning.polarities or {}
    if meaning.declared or meaning.place is None or set(polarities) != {True, False}:
        return False
    named = polarity_of_words(leaf(name).replace("_", " ").replace("-", " ").removeprefix("is "))
    if named not in ("good", "bad") or named == polarities[True]:
        return False
    proof._finding(
        False, "score-against-meaning",
        f"{proof.label}: {leaf(name)}'s description says true is {polarities[True]} ({meaning.evidence}), but its name says true is "
        f"{named}, as the score counts it with `direction: {proof.plan.direction}`: the judge reads the description and answers each "
        f"{leaf(name)} the other way, so the score counts the {polarities[True]} answers as {named}; make the description say what the name does",
        meaning.place,
    )
    return True


def meaning_may_be_the_slip(proof: ScorerProof, name: str, meaning: Meaning, moves: str) -> None:
    """A declared `meaning:` in the author's own schema that the score and `direction:` both
    go against (said at those two as well): the meaning, the direction and the score are all
    the author's, and any of them may be the slip."""
    if not meaning.declared or meaning.place is None or not proof._is_own(meaning.place):
        return
    proof._finding(
        True, "score-against-meaning",
        f"{proof.label}: {leaf(name)}'s `meaning:` declares {meaning.declared_as()}, but the score counts it the other way with "
        f"`direction: {proof.plan.direction}` ({moves}): if the meaning is the slip, turn it round",
        meaning.place,
    )


def optional_choice(proof: ScorerProof, meanings: Mapping[str, Meaning], read_by_the_score: Callable[[str], bool]) -> None:
    """`optional-choice` where the author's schema leaves out of `required:` a choice field
    whose meaning the score counts: a judge may answer without it, and the score then reads
    it as none (`where: item.on_topic` false, a lookup its default), counting a verdict never given."""
    for name, meaning in meanings.items():
        if meaning.optional_at is None or not proof._is_own(meaning.optional_at) or not read_by_the_score(name):
            continue
        proof.warning(
            "optional-choice",
            f"{proof.label}: `{leaf(name)}` is not in its object's `required:`, so the judge may leave it out, and the score then counts "
            f"the answer as if it held none of its values: a verdict never given is scored; add `{leaf(name)}` to `required:`",
            meaning.optional_at,
        )


def description_against_declared(proof: ScorerProof, meanings: Mapping[str, Meaning], read_by_the_score: Callable[[str], bool]) -> None:
    """`score-against-meaning` at the description of a field, in the author's own schema, that
    says each value means the opposite of its declared `meaning:` while the score goes with the
    meaning and `direction:`: a description copied from another schema ("yes" when the claim
    is a hallucination, where "yes" is declared good). The judge is sent the description and
    answers by it, so every verdict counts the other way."""
    best, worst = proof.trials.named("all good"), proof.trials.named("all bad")
    if best is None or worst is None or best.score is None or worst.score is None or best.score == worst.score:
        return
    if (best.score > worst.score) != (proof.plan.direction == "higher_is_better"):
        return  # the score goes against the meaning: said at the meaning, the direction and the score
    for name, meaning in meanings.items():
        described = meaning.description_says
        if not meaning.declared or described is None or described.place is None or not meaning.against_description():
            continue
        if not proof._is_own(described.place) or not read_by_the_score(name):
            continue
        proof.warning(
            "score-against-meaning",
            f"{proof.label}: {leaf(name)}'s description says the opposite of its `meaning:` ({meaning.declared_as()}), which the score and "
            f"`direction: {proof.plan.direction}` go with ({described.evidence.rstrip('.')[:120]}): the judge is sent the description and "
            f"answers by it, so every verdict counts the other way; make the description say what the meaning does",
            described.place,
        )

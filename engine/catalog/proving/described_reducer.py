"""How a score sums up a list of judged items, held to what its description says of it. A
description such as "the severity of the most severe statement: one slur is enough to flag a
reply" asks that one bad item decide, where `reduce: mean` averages it away among good ones.
The scorer is run on an answer with one of three items bad (trials.py's "worse FIELD 1"), and
a score that passes it is named at the `reduce:` that sums the items up (a part of
properties.py's ScorerProof). The other way, a `reduce: min` or `max` under a description of
a share, is read from the words alone (value_names.reducers_against_description).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...scoring.pass_line import scale_of
from ..source import Place
from .empty_answer import ScorerProof, leaf
from .truth_table import answer_in_short

#: Words of a description that let one bad item decide the whole answer.
_ONE_DECIDES = re.compile(
    r"\b(?:most severe|the worst|most harmful|at least one|a single \w+ (?:is enough|flags|fails)|one \w+ (?:is )?enough|any one \w+ (?:flags|fails))\b",
    re.IGNORECASE,
)
#: Words of a description that ask every item to count for its part.
_EACH_COUNTS = re.compile(r"\b(?:share of|fraction of|proportion of|percentage of|average|on average|mean of)\b", re.IGNORECASE)


def reducer_against_description(proof: ScorerProof) -> None:
    """`reducer-against-description`: a score over a list of items that one bad item does not
    move past the pass line where the description says one decides."""
    description = " ".join((proof.definition.description or "").split())
    one = _ONE_DECIDES.search(description)
    if one is None or _EACH_COUNTS.search(description) or proof.range is None:
        return
    line = proof.plan.pass_line.on_scale(scale_of(proof.plan.options_model()))
    good, bad = proof.trials.named("all good"), proof.trials.named("all bad")
    if good is None or bad is None or good.score is None or bad.score is None or not line.passes(good.score) or line.passes(bad.score):
        return
    for name in (name for name in proof.trials.meanings if "[]" in name and name in proof.trials.fields):
        worse = proof.trials.named(f"worse {name} 1")
        items = _items(worse.answers, name) if worse is not None else 0
        if worse is None or worse.score is None or items < 2 or not line.passes(worse.score):
            continue  # bounds that ask for one item (one per tool call made) leave nothing to sum up
        place = _reducer_of(proof, name)
        if place is None or not proof._is_own(place):
            return
        proof.warning(
            "reducer-against-description",
            f"{proof.label}.score: the description says {one[0]!r}, so one bad {leaf(name)} should decide, but an answer with one {leaf(name)} of "
            f"{items} bad ({answer_in_short(worse)}) scores {worse.score:g} and passes (every one bad scores {bad.score:g}); sum the items up "
            "with `max` or `min` (the worst of them), or make the description say how the items are summed up",
            place,
        )
        return


def _items(answers: Mapping[str, Any], name: str) -> int:
    """How many items the answer's list of the field `name` (STEP.LIST[].FIELD) holds."""
    step_id, _, path = name.partition(".")
    answer = answers.get(step_id)
    listed = answer.get(path.partition("[]")[0]) if isinstance(answer, Mapping) else None
    return len(listed) if isinstance(listed, list) else 0


def _reducer_of(proof: ScorerProof, name: str) -> Place | None:
    """The `reduce:` of the score's value over the field's list, else where the score reads it."""
    step_id, _, path = name.partition(".")
    listed = path.rpartition("[].")[0]
    values = proof._score_raw().get("values")
    for value_name, value in values.items() if isinstance(values, Mapping) else ():
        if isinstance(value, Mapping) and f"{step_id}.{listed}" in str(value.get("items", "")):
            return proof.at("steps", proof.score_index, "values", value_name, "reduce" if "reduce" in value else "items")
    return proof._reader_of(name)

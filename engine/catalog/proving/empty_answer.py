"""What an answer with nothing to judge scores, proved on the trials of one scorer (a part
of properties.py's ScorerProof): an empty answer at the worst end of the score, an `empty:`
that no longer says what its `# scorers: ignore[empty-scores-worst]` says, and an
`average_precision` whose `empty:` also answers for nothing relevant.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from ...errors import ConfigError
from ...judge.bounds import LIST_KEYWORDS
from ...scoring.plan import ScorerPlan
from ...scoring.steps.score import ScoreStepPlan
from ..silencing import marked
from ..source import CatalogSource, Place, load_shared, position
from ..spec import ScorerDefinition
from .meanings import Meaning
from .trials import Trial, Trials
from .truth_table import answer_in_short


class ScorerProof(Protocol):
    """What these proofs read of properties.py's ScorerProof."""

    source: CatalogSource
    definition: ScorerDefinition
    trials: Trials
    plan: ScorerPlan
    raw: Any
    range: tuple[float, float] | None
    score_index: int
    score_step: ScoreStepPlan

    @property
    def label(self) -> str: ...
    def at(self, *loc: Any, value: bool = True) -> Place | None: ...
    def warning(self, code: str, message: str, place: Place | None) -> None: ...
    def _score_raw(self) -> Mapping[str, Any]: ...
    def _is_own(self, place: Place) -> bool: ...
    def _finding(self, declared: bool, code: str, message: str, place: Place | None) -> None: ...
    def _good_value(self, meaning: Meaning) -> str: ...
    def _bad_value(self, meaning: Meaning) -> str: ...
    def _reader_of(self, name: str) -> Place | None: ...


def empty_answer(proof: ScorerProof) -> None:
    """An answer with empty lists scoring the worst end while others reach the best
    (`empty-scores-worst`), or an `empty:` marked as the worst that no longer is."""
    trial = proof.trials.named("empty lists")
    if trial is not None and _holds_items(trial.answers):
        # The bounds ask for items (one per sentence given ...): the lists are empty only for an
        # item with none, which the author's `empty:` (when written) says what to score.
        trial = proof.trials.nothing_to_judge if _written_empty(proof) and _counted_in_output(proof) else None
    if trial is None or trial.score is None or proof.range is None or not proof.trials.fields or _holds_items(trial.answers) or not _has_list(trial.answers):
        return  # an answer with no list (a classifier's label) has nothing to leave empty
    low, high = proof.range
    higher = proof.plan.direction == "higher_is_better"
    worst = low if higher else high
    best = high if higher else low
    scores = [float(other.score) for other in proof.trials.scored() if other.score is not None]
    if low == high:
        return
    if math.isclose(trial.score, best):
        _empty_calls_a_non_answer_perfect(proof, trial, best)
    if not math.isclose(trial.score, worst):
        _stale_empty_marks(proof, trial, higher)
        return
    if not any(math.isclose(score, best) for score in scores):
        return
    place = _empty_place(proof)
    if place is None:
        return
    declared = all("empty" in value for value in (proof._score_raw().get("values") or {}).values() if isinstance(value, Mapping) and "reduce" in value)
    advice = (
        "if an output with nothing to judge is as bad as can be, say so with `# scorers: ignore[empty-scores-worst]` on this line"
        if declared else
        f"say what an empty list scores (`empty: {best:g}`, the best) or leave such an item unscored (`on_skip: {{not_scorable: ...}}`)"
    )
    proof.warning(
        "empty-scores-worst",
        f"{proof.label}.score: an answer with empty lists ({answer_in_short(trial)}: nothing found to judge) scores {trial.score:g}, "
        f"the worst end of a {better_word(higher)}-is-better score: an output with nothing to judge is marked as bad as can be; {advice}",
        place,
    )


def empty_output_scores_best(proof: ScorerProof) -> None:
    """`empty_output: score`, written by the author, on a judged scorer that asks its judge
    nothing about an empty output (every judged step skipped) and scores it the best end,
    while other answers score worse: an empty reply then passes as perfect, where scoring it
    was meant to count it. (A judge still asked, about tool calls or the input, decides.)"""
    trial = proof.trials.named("empty output")
    judged = {step.id for step in proof.plan.steps if step.answer_model is not None}
    if trial is None or trial.score is None or proof.range is None or not judged or judged & trial.ran:
        return
    low, high = proof.range
    higher = proof.plan.direction == "higher_is_better"
    best = high if higher else low
    if low == high or not math.isclose(trial.score, best):
        return
    if all(math.isclose(float(other.score), best) for other in proof.trials.scored() if other.score is not None):
        return
    place = proof.at("empty_output") if isinstance(proof.raw, Mapping) and "empty_output" in proof.raw else None
    if place is None or not proof._is_own(place):
        return
    skipped = ", ".join(sorted(judged))
    said = (f"{proof.label}.empty_output: score runs the scorer on an empty output, where its judged steps ({skipped}) are skipped "
            f"with nothing to judge, and it scores {trial.score:g}, the best end of a {better_word(higher)}-is-better score: an empty reply passes as perfect")
    written = [(name, value["empty"]) for name, value in (proof._score_raw().get("values") or {}).items() if isinstance(value, Mapping) and "empty" in value]
    given = proof.at("steps", proof.score_index, "values", written[0][0], "empty") if len(written) == 1 else None
    if given is not None and proof._is_own(given) and given != place:
        # The author wrote both; the `empty:` is what gives the nothing judged its score.
        proof.warning("empty-output-scores-best", f"{said}, by `empty: {written[0][1]}`; give an empty list the worst score here, or leave an empty "
                      "output unscored (`empty_output: not_scorable`, the default)", given)
        return
    proof.warning(
        "empty-output-scores-best",
        f"{said}; leave it unscored (`empty_output: not_scorable`, the default), or give an empty output the worst score in the score's expression",
        place,
    )


def _written_empty(proof: ScorerProof) -> bool:
    """Whether the author's score says what an empty list scores (`empty:`)."""
    return any(isinstance(value, Mapping) and "empty" in value for value in (proof._score_raw().get("values") or {}).values())


def _counted_in_output(proof: ScorerProof) -> bool:
    """Whether a judged step's list is as long as the output has pieces (`items: "sentences(output)
    | length"`): its empty lists are then an output with nothing to judge, not an item with no
    context retrieved, which may well be the bad end."""
    return any(
        bound.keyword in LIST_KEYWORDS and not isinstance(bound.value, (int, float)) and "output" in bound.value.names
        for step in proof.plan.steps for bound in getattr(step, "bounds", ())
    )


def _has_list(answer: Any) -> bool:
    """Whether an answer has a list, at any depth."""
    if isinstance(answer, list):
        return True
    return isinstance(answer, Mapping) and any(_has_list(value) for value in answer.values())


def _holds_items(answer: Any) -> bool:
    """Whether an answer has a list with an item in it, at any depth."""
    if isinstance(answer, list):
        return bool(answer)
    if isinstance(answer, Mapping):
        return any(_holds_items(value) for value in answer.values())
    return False


def _stale_empty_marks(proof: ScorerProof, trial: Trial, higher: bool) -> None:
    """An `empty:` whose line says, by `# scorers: ignore[empty-scores-worst]`, that an
    output with nothing to judge scores the worst, when it no longer does: the mark and the
    value disagree, and one of them was changed without the other."""
    for value_name, value in (proof._score_raw().get("values") or {}).items():
        if not isinstance(value, Mapping) or "reduce" not in value or "empty" not in value:
            continue
        place = proof.at("steps", proof.score_index, "values", value_name, "empty")
        if place is None or place.file is None or not proof._is_own(place) or not marked(str(place.file), place.line, "empty-scores-worst", named=True):
            continue
        proof.warning(
            "stale-ignore",
            f"{proof.label}.score: `# scorers: ignore[empty-scores-worst]` on `empty: {value['empty']}` says an output with nothing to "
            f"judge scores the worst, but an answer with empty lists ({answer_in_short(trial)}) scores {trial.score:g}, not the worst end "
            f"of a {better_word(higher)}-is-better score: the value or the comment is not what was meant; make them agree",
            place,
        )


def _empty_calls_a_non_answer_perfect(proof: ScorerProof, trial: Trial, best: float) -> None:
    """An `empty:` written by the author that gives an answer with nothing to judge the best
    score, on a value that is a share of the good answers (all good gives it its most, all bad
    its least, by what the answers mean): a share of good verdicts gives a non-answer nothing
    good, so this `empty:` calls an output that says nothing perfect (`empty-scores-best`). A
    value counting the bad answers (a hallucination's share) rightly gives nothing found the best."""
    good, bad = proof.trials.named("all good"), proof.trials.named("all bad")
    if good is None or bad is None or not _nothing_to_judge(trial.answers):
        return
    step = proof.score_step.id
    given = [values for values in (trial.results.get(step), good.results.get(step), bad.results.get(step)) if isinstance(values, Mapping)]
    if len(given) != 3:
        return
    for value_name, value in (proof._score_raw().get("values") or {}).items():
        place = proof.at("steps", proof.score_index, "values", value_name, "empty")
        if not isinstance(value, Mapping) or "empty" not in value or place is None or not proof._is_own(place):
            continue
        if value.get("reduce") in ("min", "max"):
            continue  # the least or most of the items, not a share: with none, none is doubtful (or bad) either
        shares = [float(share) for values in given if isinstance(share := values.get(value_name), (int, float))]
        if len(shares) != 3:
            continue
        on_empty, on_good, on_bad = shares
        if not (on_good > on_bad and math.isclose(on_empty, value["empty"]) and on_empty >= on_good):
            continue
        if _base_empty(proof, value_name) == value["empty"]:
            continue  # what the scorer it extends says of nothing to judge (faithfulness: nothing unfaithful), kept
        proof.warning(
            "empty-scores-best",
            f"{proof.label}.score: `empty: {value['empty']}` gives an answer with empty lists ({answer_in_short(trial)}: nothing found "
            f"to judge) the best score, {trial.score:g}, but `{value_name}` is a share of the good answers (all good gives it {on_good:g}, "
            f"all bad {on_bad:g}): an output that says nothing has earned nothing good, and is called perfect; write `empty: {on_bad:g}`, "
            "or, if nothing to judge means nothing wrong (as a share of supported claims may), say so with "
            "`# scorers: ignore[empty-scores-best]` on this line",
            place,
        )
        return


def _base_empty(proof: ScorerProof, value_name: str) -> Any:
    """The `empty:` the scorer it extends gives the value of the same name in its score step
    (None when it extends none, or gives none)."""
    own = proof.source.scorers.get(proof.definition.id)
    base = own.get("extends") if isinstance(own, Mapping) else None
    if not isinstance(base, str) or base == proof.definition.id:
        return None
    try:
        raw = proof.source.raw_definition(base)
    except ConfigError:
        return None
    for step in raw.get("steps") or [] if isinstance(raw, Mapping) else []:
        if isinstance(step, Mapping) and step.get("id") == proof.score_step.id:
            value = (step.get("values") or {}).get(value_name)
            return value.get("empty") if isinstance(value, Mapping) else None
    return None


def _nothing_to_judge(answers: Mapping[str, Any]) -> bool:
    """Whether every list of the answers is empty (the bounds may ask for items even then)."""
    lists = [value for answer in answers.values() if isinstance(answer, Mapping) for value in answer.values() if isinstance(value, list)]
    return bool(lists) and not any(lists)


def _empty_place(proof: ScorerProof) -> Place | None:
    """The first reducer that leaves an empty list to the default (0), else the first
    `empty:` written (a choice the author then confirms by silencing the warning there)."""
    reducers = [(name, value) for name, value in (proof._score_raw().get("values") or {}).items() if isinstance(value, Mapping) and "reduce" in value]
    for value_name, value in reducers:
        if "empty" not in value:
            return proof.at("steps", proof.score_index, "values", value_name, "reduce")
    for value_name, _ in reducers:
        return proof.at("steps", proof.score_index, "values", value_name, "empty")
    return None


def empty_scores_nothing_relevant(proof: ScorerProof, meanings: Mapping[str, Meaning], worst: Trial, declared: bool) -> bool:
    """An `average_precision` whose `empty:` gives every answer bad the score of every
    answer good: that reducer gives `empty` for a list with no relevant item as well as
    for no list, so its `empty:` is what nothing relevant scores (said at its line)."""
    higher = proof.plan.direction == "higher_is_better"
    given = worst.results.get(proof.score_step.id)
    for value_name, value in (proof._score_raw().get("values") or {}).items():
        if not isinstance(value, Mapping) or value.get("reduce") != "average_precision" or "empty" not in value:
            continue
        if not isinstance(given, Mapping) or given.get(value_name) != value["empty"]:
            continue
        name, meaning = next(iter(meanings.items()))
        proof._finding(
            declared, "score-against-meaning",
            f"{proof.label}.score: with every {leaf(name)} {proof._bad_value(meaning)}, no item passes `where`, and "
            f"`reduce: average_precision` then gives its `empty: {value['empty']}`: the answer scores {worst.score:g}, "
            f"as well as every {leaf(name)} {proof._good_value(meaning)} does, for a score where {better_word(higher)} is better; "
            "`empty:` is also what an answer with nothing relevant scores",
            proof.at("steps", proof.score_index, "values", value_name, "empty"),
        )
        return True
    return False


def leaf(name: str) -> str:
    """The last part of a field's path (`verdict` of `analyze.verdicts[].verdict`)."""
    return name.rpartition(".")[2].removesuffix("[]") or name


def better_word(higher: bool) -> str:
    return "higher" if higher else "lower"


def list_kept_from_empty(schemas: Mapping[str, Path], own_folder: Path, skip: str) -> tuple[int, Place | None] | None:
    """The `minItems` (and where it is written, in the author's own schema: `schemas` by step,
    `own_folder` the author's) that keeps the list a skip tests for emptiness (`not
    announced.next_steps`) from ever being empty: the skip can never hold, and the bound is the
    line to change."""
    tested = re.fullmatch(r"\s*not\s+(\w+)\.(\w+)\s*", skip)
    path = schemas.get(tested[1]) if tested else None
    if tested is None or path is None or not path.resolve().is_relative_to(own_folder.resolve()):
        return None
    schema = load_shared(path)
    node = schema.get("properties", {}).get(tested[2]) if isinstance(schema, Mapping) else None
    least = node.get("minItems") if isinstance(node, Mapping) else None
    if not isinstance(least, int) or least < 1:
        return None
    return least, position(node, ["minItems"], value=True)

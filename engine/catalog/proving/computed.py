"""What `scorers check` proves of a scorer that asks no judge, run on items varied in what it
reads (item_trials.py):

- two values of its steps that are equal on every item, the items varied in what they read
  (tool results with and without errors), say the same: one of them lost the filter that made
  it a part (`always-equal`);
- a scorer that `extends:` another and rewrites its score must not move against the other's
  in a value both read: the other's score rises with `check.similarity`, which says a higher
  similarity is better; one that falls with it points the wrong way (`score-against-parent`);
- a score of the author's own stays within its range on every item (a share whose
  denominator counts fewer things than its numerator does not).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ...errors import ConfigError
from ...scoring.plan import ScorerPlan
from ..placing import Placing
from ..silencing import silenced
from ..source import CatalogSource, Place, position
from ..spec import ScorerDefinition
from .item_trials import ItemTrial, numbers_items, own_values, run_items, varied_items
from .rounding import rounding_too_coarse


class ComputedProof(Placing):
    """The findings of one judge-free scorer's item trials, placed in the author's file."""

    def __init__(self, source: CatalogSource, definition: ScorerDefinition, plan: ScorerPlan, parent: ScorerPlan | None) -> None:
        self.source = source
        self.definition = definition
        self.own = source.scorers.get(definition.id)
        self.problems: list[ConfigError] = []
        self.warnings: list[ConfigError] = []
        self.plan = plan
        self.parent = parent if parent is not None and self._rewrites_the_score() else None
        # Run only when there is something to hold (running a scorer compiles its expressions,
        # most of a check's time): a value of the author's that reads what a value before it
        # reads, so that the two may be equal, or a base to follow.
        # The score's range is held on every item of a scorer of the author's own steps.
        self.range = plan.scores_range(plan.options_model()) if self._rewrites_the_score() else None
        overrides = "ground_truth" in plan.requires and any(True for _ in own_values(self.own))
        items = varied_items(plan) if self._may_be_equal(plan) or self.parent is not None or self.range is not None or overrides else {}
        # Two items first: values that differ there are never equal on every item, and most do.
        first = dict(list(items.items())[:2])
        self.trials = [trial for trial in run_items(plan, first) if trial.results] if first else []
        if self.parent is not None or self.range is not None or self._equal_pair(changing=False) is not None or overrides:
            self.trials = [trial for trial in run_items(plan, items) if trial.results]
        as_numbers = any(re.search(r"\|\s*(?:int|float)\b|\b(?:int|float)\(", written) for _, _, written, _ in own_values(self.own))
        if len({trial.score for trial in self.trials}) == 1 and "ground_truth" in plan.requires and as_numbers:
            numbers = [trial for trial in run_items(plan, numbers_items()) if trial.results]
            if len({trial.score for trial in numbers}) > 1:
                self.trials = numbers  # a scorer of numbers written as text: every text reads as 0
        self.parent_trials = {trial.label: trial for trial in run_items(self.parent, items) if trial.results} if self.parent is not None else {}

    def findings(self) -> list[ConfigError]:
        self.rounding()
        self.within_range()
        if len(self.trials) > 1:
            self.always_equal()
            self.against_parent()
            if not self.warnings and not self.problems:
                self.expected_answer_scores_worst()
            if not self.warnings and not self.problems:
                self.output_never_read()
        kept = [found for found in [*self.problems, *self.warnings] if not silenced(found)]
        return [self.in_own_file(found, self.definition.id) for found in kept]

    def _may_be_equal(self, plan: ScorerPlan) -> bool:
        """Whether a value of the author's reads the same names as a value before it."""
        own = {(step, name) for step, name, _, _ in own_values(self.own)}
        read = [
            (step.id, str(name), frozenset(getattr(value, "names", ())))
            for step in plan.steps for name, value in (getattr(step, "values", None) or {}).items()
        ]
        return any(
            names and names == later_names and (later_step, later) in own
            for index, (_, _, names) in enumerate(read) for later_step, later, later_names in read[index + 1:]
        )

    def within_range(self) -> None:
        """A score outside its range on an item tried: what the steps gave is said, as the
        value that counts the wrong things (a share's denominator counting tool names, not
        calls) is most often one of them."""
        if self.range is None:
            return
        low, high = self.range
        trial = next((trial for trial in self.trials if trial.score is not None and not low - 1e-9 <= trial.score <= high + 1e-9), None)
        if trial is None or trial.score is None:
            return
        gave = ", ".join(f"{step}.{name} {_shown(value)}" for step, values in trial.results.items() if isinstance(values, Mapping)
                         for name, value in values.items() if _is_number(value) and name != "score")
        self.problem(
            f"{self.definition.id}.score: on an item of {trial.label}, the score is {trial.score:g}, outside the range of its scores, "
            f"{low:g} to {high:g}{f' (the steps gave {gave})' if gave else ''}: does a value count other things than the score takes it to?",
            self._score_place(),
        )

    def rounding(self) -> None:
        score = self.plan.steps[-1]
        found = rounding_too_coarse(self.definition.id, getattr(score, "round", None), self.range)
        if found is not None:
            self.problem(found, self._score_place("round"))

    def expected_answer_scores_worst(self) -> None:
        """An output that is the expected answer scoring the worst end of the author's score
        while an unrelated output scores better: the score measures the distance where the
        closeness was meant (a `1 -` lost), or points against `direction:`."""
        if self.range is None or not any("ground_truth" in step.reads for step in self.plan.steps):
            return
        tried = {trial.label: trial.score for trial in self.trials}
        same, unrelated = tried.get("the output is the expected answer"), tried.get("the output is unrelated")
        if same is None or unrelated is None:
            return
        higher = self.definition.direction == "higher_is_better"
        worst = self.range[0] if higher else self.range[1]
        if abs(same - worst) > 1e-9 or (unrelated > same) != higher or unrelated == same:
            return
        self.warning(
            "expected-answer-scores-worst",
            f"{self.definition.id}.score: an output that is the expected answer scores {same:g}, the worst end of a "
            f"{'higher' if higher else 'lower'}-is-better score, and an unrelated output {unrelated:g}: the score measures how far the "
            "output is from the expected answer, not how close; turn it round (`1 - ...`), or the direction",
            self._read_value_place() or self._score_place(),
        )

    def output_never_read(self) -> None:
        """A scorer that compares the output with the expected answer scoring every output
        alike, the expected answer itself and an unrelated text among them: a value of the
        author's that should read the output reads another text (an override of `output_text`
        given the expected answer)."""
        scores = {trial.score for trial in self.trials}
        compares = "output" in self.plan.requires and any("ground_truth" in step.reads for step in self.plan.steps)
        labels = {trial.label for trial in self.trials}
        if not compares or not {"the output is the expected answer", "the output is unrelated"} <= labels or len(scores) != 1 or None in scores:
            return
        # The author's value named for the output that does not read it, else the score.
        named = [place for step, name, written, place in own_values(self.own) if "output" in name and not re.search(r"\boutput\b", written)]
        self.warning(
            "output-never-read",
            f"{self.definition.id}: every output tried scores {next(iter(scores)):g} ({', '.join(trial.label for trial in self.trials)}): the score "
            "never reads the output it requires; is a value that should read `output` given another text?",
            named[0] if len(named) == 1 else self._score_place(),
        )

    def _read_value_place(self) -> Place | None:
        """Where the one value of the author's that the score reads is written: the number the
        score passes on, and the likelier slip."""
        score = next((step.get("score") for step in (self.own or {}).get("steps") or [] if isinstance(step, Mapping) and "score" in step), None)
        read = [place for step, name, _, place in own_values(self.own) if isinstance(score, str) and re.search(rf"\b{re.escape(step)}\.{re.escape(name)}\b", score)]
        return read[0] if len(read) == 1 else None

    def always_equal(self) -> None:
        """Two values equal on every item though each changes from item to item."""
        pair = self._equal_pair(changing=True)
        if pair is None:
            return
        step, name, written, place, other = pair
        mine = self._across(step, name) or []
        shown = "; ".join(f"{trial.label}: {_shown(value)}" for trial, value in zip(self.trials, mine))
        self.warning(
            "always-equal",
            f"{self.definition.id}.{step}.values.{name}: `{' '.join(written.split())}` equals `{other}` on every item tried "
            f"({shown}): the two say the same, so one of them lost "
            "what makes it a part of the other (a `selectattr(...)`, a `select`, a `where`)",
            place,
        )

    def _equal_pair(self, changing: bool) -> tuple[str, str, str, Place, str] | None:
        """The first value of the author's equal on every item to a value before it (its step,
        name, expression, place and the other's name); `changing`: only a value that is not
        the same on every item."""
        computed = [(step, str(name)) for trial in self.trials[:1] for step, values in trial.results.items() if isinstance(values, Mapping) for name in values]
        for step, name, written, place in own_values(self.own):
            mine = self._across(step, name)
            if mine is None or (changing and len({_key(value) for value in mine}) < 2):
                continue
            for other_step, other in computed:
                if (other_step, other) == (step, name):
                    break  # compared with the values before it only: the later one is the slip
                theirs = self._across(other_step, other)
                if theirs is not None and [_key(value) for value in theirs] == [_key(value) for value in mine]:
                    return step, name, written, place, other if other_step == step else f"{other_step}.{other}"
        return None

    def _across(self, step: str, name: str) -> list[Any] | None:
        """The value `step.name` on each item (None when an item lacks it or it is no count or list)."""
        found = []
        for trial in self.trials:
            values = trial.results.get(step)
            if not isinstance(values, Mapping) or name not in values or isinstance(values[name], (str, bool)) or values[name] is None:
                return None
            found.append(values[name])
        return found

    def against_parent(self) -> None:
        """The score moving against the score of the scorer it extends, in a number both read."""
        if self.parent is None or self.parent.direction != self.definition.direction:
            return
        shared = [trial for trial in self.trials if trial.label in self.parent_trials]
        for step, name in _numbers(shared):
            points = [(float(trial.results[step][name]), trial.score, self.parent_trials[trial.label].score) for trial in shared]
            if any(score is None or theirs is None for _, score, theirs in points):
                continue
            mine = _trend([(value, float(score or 0)) for value, score, _ in points])
            parents = _trend([(value, float(theirs or 0)) for value, _, theirs in points])
            if mine == 0 or parents == 0 or mine == parents:
                continue
            ordered = sorted(points, key=lambda point: point[0])
            low, high = ordered[0], ordered[-1]
            moves = "falls" if mine < 0 else "rises"
            self.warning(
                "score-against-parent",
                f"{self.definition.id}.score: the score {moves} as `{step}.{name}` rises ({_at(low[1], low[0])}, {_at(high[1], high[0])}), "
                f"where the score of `{self.parent.id}`, which it extends, {'rises' if parents > 0 else 'falls'} with it "
                f"({_at(low[2], low[0])}, {_at(high[2], high[0])}): there a {'higher' if parents > 0 else 'lower'} `{name}` is better; "
                "is a comparison the wrong way round?",
                self._score_place(),
            )
            return

    def _rewrites_the_score(self) -> bool:
        return any(isinstance(step, Mapping) and "score" in step for step in (self.own or {}).get("steps") or [])

    def _score_place(self, key: str = "score") -> Place | None:
        for index, step in enumerate((self.own or {}).get("steps") or []):
            if isinstance(step, Mapping) and "score" in step:
                return position(self.own, ["steps", index, key if key in step else "score"], value=True)
        return position(self.source.scorers, [self.definition.id])


def _numbers(trials: Sequence[ItemTrial]) -> Iterator[tuple[str, str]]:
    """Each number every trial's steps gave (the score step's own excepted)."""
    first = trials[0].results if trials else {}
    for step, values in first.items():
        if not isinstance(values, Mapping):
            continue
        for name in values:
            if name == "score" or not all(_is_number((trial.results.get(step) or {}).get(name)) for trial in trials):
                continue
            if len({float((trial.results.get(step) or {})[name]) for trial in trials}) > 1:
                yield step, str(name)


def _trend(points: list[tuple[float, float]]) -> int:
    """1 when `y` never falls as `x` rises and rises somewhere, -1 the other way, else 0."""
    ordered = [y for _, y in sorted(points)]
    steps = [after - before for before, after in zip(ordered, ordered[1:])]
    if all(step >= 0 for step in steps) and any(step > 0 for step in steps):
        return 1
    if all(step <= 0 for step in steps) and any(step < 0 for step in steps):
        return -1
    return 0


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return f"{len(value)} item{'s' if len(value) != 1 else ''}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _at(score: float | None, value: float) -> str:
    return f"{score:g} at {round(value, 2):g}" if score is not None else f"no score at {round(value, 2):g}"


def prove_computed(source: CatalogSource, definition: ScorerDefinition, plan: ScorerPlan, parent: ScorerPlan | None) -> list[ConfigError]:
    from .described_examples import examples_against_description
    from .described_quantifier import case_against_texts, quantifier_against_description, texts_never_found

    described = [
        *quantifier_against_description(source, definition, plan), *case_against_texts(source, definition, plan), *texts_never_found(source, definition, plan),
        *examples_against_description(source, definition, plan),
    ]
    counted = [found for found in described if not silenced(found)]
    return [*ComputedProof(source, definition, plan, parent).findings(), *counted]

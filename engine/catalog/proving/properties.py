"""What `scorers check` proves of a scorer by running it on answers made from its schemas (trials.py):
the score stays in its range for every answer and reaches both ends; rounding keeps the range's
resolution; each rule refuses some answers and accepts others; each skip condition can be true and
false; nothing fails on an answer the schema accepts; the score moves the way `direction:` says as the
answers get worse (by what their values mean) and scores each as the description says; an empty
answer scores the best end. Each finding is placed at the author's line to change.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from ...scoring.pass_line import scale_of
from ...scoring.plan import ScorerPlan
from ...scoring.steps import step_kind
from ...scoring.steps.score import ScoreStepPlan
from ..placing import Placing
from ..root_setting import Compile, root_setting, said_at_root
from ..literal_text import texts_in
from ..silencing import silenced
from ..source import CatalogSource, Place, position
from ..spec import ScorerDefinition
from .empty_answer import better_word, empty_answer, empty_output_scores_best, empty_scores_nothing_relevant, leaf, list_kept_from_empty
from .meanings import Meaning
from .described_meaning import description_against_name, meaning_against_description, meaning_may_be_the_slip, optional_choice, description_against_declared
from .described_reducer import reducer_against_description
from .described_scores import scores_against_description, skip_scored_against_description
from .in_between import in_between_out_of_order
from .pass_line_meaning import pass_line_against_comment, pass_line_against_meaning
from .rounding import rounding_across_the_line, rounding_too_coarse
from .prompt_polarity import verdicts_defined_against
from .trials import RuleTally, Trial, Trials, run_trials
from .truth_table import answer_in_short
from .where_meaning import where_mixes_meanings


class ScorerProof(Placing):
    """The findings of one scorer's trials, placed in the author's file."""

    def __init__(self, source: CatalogSource, definition: ScorerDefinition, trials: Trials, score_range: tuple[float, float] | None, compile: Compile) -> None:
        self.source = source
        #: Compiles the scorer with one setting changed, to find the setting a finding starts from.
        self.compile = compile
        self.definition = definition
        self.trials = trials
        self.plan: ScorerPlan = trials.plan
        self.raw = source.raw_definition(definition.id)
        self.range = score_range
        self.problems: list[ConfigError] = []
        self.warnings: list[ConfigError] = []
        self.score_index, self.score_step = next((index, step) for index, step in enumerate(self.plan.steps) if isinstance(step, ScoreStepPlan))

    def findings(self) -> list[ConfigError]:
        self.failures()
        self.rounding()
        if self.mostly_refused():
            # What the few answers left say of the range, the skips and the direction is not evidence.
            return self._placed()
        self.within_range()
        self.rules()
        self.skip_conditions()
        self.direction()
        empty_answer(self)
        empty_output_scores_best(self)
        pass_line_against_meaning(self)
        pass_line_against_comment(self)
        verdicts_defined_against(self)
        scores_against_description(self)
        skip_scored_against_description(self)
        reducer_against_description(self)
        optional_choice(self, self.trials.meanings, self._read_by_the_score)
        description_against_declared(self, self.trials.meanings, self._read_by_the_score)
        where_mixes_meanings(self, self.trials.meanings)
        return self._placed()

    def _placed(self) -> list[ConfigError]:
        """The findings in the author's own files; a warning silenced where it shows (a
        built-in's `# scorers: ignore[code]`) stays silent in every scorer built on it."""
        kept = [found for found in [*self.problems, *self.warnings] if not silenced(found)]
        return [self.in_own_file(found, self.definition.id) for found in kept]

    # -- where ----------------------------------------------------------------------------
    def at(self, *loc: Any, value: bool = True) -> Place | None:
        return position(self.raw, list(loc), value=value) or position(self.raw, list(loc[:-1])) or position(self.source.scorers, [self.definition.id])

    def step_at(self, step_id: str, *loc: Any) -> Place | None:
        index = next((index for index, step in enumerate(self.plan.steps) if step.id == step_id), None)
        return self.at("steps", index, *loc) if index is not None else self.at("steps")

    def score_at(self) -> Place | None:
        return self.at("steps", self.score_index, "score")

    @property
    def label(self) -> str:
        return self.definition.id

    # -- the properties -------------------------------------------------------------------
    def failures(self) -> None:
        """An answer its schema accepts must not make a step fail."""
        seen: set[str] = set()
        for trial in self.trials.trials:
            # A blank input fails where a template shows it untested: the template checks say so.
            if trial.error is None or trial.error in seen or trial.scenario.blank_item:
                continue
            seen.add(trial.error)
            place: Place | None
            if trial.error_at is not None:
                file, line, column = trial.error_at
                message, place = f"{trial.error} (with {answer_in_short(trial)}: answers its schema accepts)", Place(file, line or 0, column or 0)
            else:
                step = next((step.id for step in self.plan.steps if f".{step.id}" in trial.error or f"{step.id}." in trial.error), self.score_step.id)
                message, place = f"{self.label}: with {answer_in_short(trial)} (answers its schema accepts) the scorer fails: {trial.error}", self.step_at(step, "id")
            root = root_setting(self.source, self.definition.id, self.compile, self._runs_clean) if len(seen) == 1 else None
            if root is not None:
                self.problem(said_at_root(root, message, place), root.place)
                return
            self.problem(message, place)

    def mostly_refused(self) -> bool:
        """Whether the step's own rules and bounds refuse most answers made from its schema, on
        the sample item: the judge would be asked again, and again, for most items."""
        refused = [trial for trial in self.trials.trials if trial.refused is not None and not trial.scenario.blank_item]
        tried = [trial for trial in self.trials.trials if not trial.scenario.blank_item]
        if len(refused) * 2 <= len(tried):
            return False
        step, why = refused[0].refused or ("", "")
        culprit = self._refusing_rule(step)
        if culprit is not None:
            # The author's own rule refuses what the schema and bounds ask for: the rule's line
            # is the one to read (a comparison the wrong way round, a bound it contradicts).
            self.warning(
                "answers-refused",
                f"{self.label}.{step}: the rule `{' '.join(culprit.rule.rule.check.split())}` refuses {culprit.refused_within_bounds} of "
                f"{culprit.refused_within_bounds + culprit.accepted_within_bounds} answers made from the step's schema and bounds for a "
                f"sample item: {' '.join(why.split())}",
                self._rule_place(culprit.rule),
            )
            return True
        self.warning(
            "answers-refused",
            f"{self.label}.{step}: most answers made from its schema and bounds for a sample item are refused: "
            f"{' '.join(why.split())}",
            self.step_at(step, "id"),
        )
        return True

    def _refusing_rule(self, step: str) -> RuleTally | None:
        """The author's own rule of `step` that refuses most answers within the request's
        bounds (None when none does, or when the rule is a built-in's: then the author's
        bounds or settings are what changed)."""
        tallies = [
            tally for tally in self.trials.rules
            if tally.step == step and tally.refused_within_bounds > tally.accepted_within_bounds
        ]
        if not tallies:
            return None
        culprit = max(tallies, key=lambda tally: tally.refused_within_bounds)
        place = self._rule_place(culprit.rule)
        return culprit if place is not None and self._is_own(place) else None

    def within_range(self) -> None:
        if self.range is None:
            return
        low, high = self.range
        outside = [trial for trial in self.trials.scored() if not low - 1e-9 <= float(trial.score or 0) <= high + 1e-9]
        if outside:
            trial = outside[0]
            entry = self._option_entry_of(trial)
            message = (
                f"{self.label}.score: with {answer_in_short(trial)}, the score is {trial.score:g}, outside the range of its scores, {low:g} to {high:g}"
                + (" (`options.scale`)" if self.plan.on_scale else "")
            )
            root = None if entry is not None else root_setting(self.source, self.definition.id, self.compile, lambda plan: self._within(plan, low, high))
            if root is not None:
                self.problem(said_at_root(root, message, self.score_at()), root.place)
            else:
                self.problem(message + (": the option entry the answer picked sets it" if entry is not None else ""), entry or self.score_at())
            return
        scores = [float(trial.score) for trial in self.trials.scored() if trial.score is not None]
        if not scores or not self.trials.fields or not self._answers_alone_decide():
            return
        missing = [(end, name) for end, name in ((low, "lowest"), (high, "highest")) if not any(math.isclose(score, end, abs_tol=1e-9) for score in scores)]
        if missing:
            end, name = missing[0]
            seen = min(scores) if name == "lowest" else max(scores)
            self.warning(
                "score-never-reaches",
                f"{self.label}.score: no answer its schema accepts scores {end:g}, the {name} of its range ({low:g} to {high:g}): "
                f"the {'least' if name == 'lowest' else 'most'} any scores is {seen:g}; check what the score divides or multiplies by",
                self.score_at(),
            )

    def _runs_clean(self, plan: ScorerPlan) -> bool:
        """Whether `plan` (this scorer with one setting changed) fails on no answer tried."""
        trials = run_trials(plan, {}, self.trials.meanings)
        return trials is not None and bool(trials.scored()) and not any(trial.error for trial in trials.trials if not trial.scenario.blank_item)

    def _within(self, plan: ScorerPlan, low: float, high: float) -> bool:
        """Whether `plan` (this scorer with one setting changed) scores every answer tried
        within `low` to `high`, scoring as many of them as this one does."""
        trials = run_trials(plan, {}, self.trials.meanings)
        if trials is None:
            return False
        scores = [float(trial.score) for trial in trials.scored() if trial.score is not None]
        return len(scores) >= len(self.trials.scored()) and all(low - 1e-9 <= score <= high + 1e-9 for score in scores)

    def _option_entry_of(self, trial: Trial) -> Place | None:
        """The entry of the author's own options that the answer picked (a classifier's label
        with its score), when the answer names one: where a score that leaves the range is set."""
        picked = {value for answer in trial.answers.values() for value in _words_of(answer)}
        own = self.source.scorers.get(self.definition.id)
        options = own.get("options") if isinstance(own, Mapping) else None
        if not isinstance(options, Mapping) or not picked:
            return None
        for name, declared in options.items():
            default = declared.get("default") if isinstance(declared, Mapping) else None
            for index, entry in enumerate(default if isinstance(default, list) else []):
                if isinstance(entry, Mapping) and any(isinstance(value, str) and value in picked for value in entry.values()):
                    return position(declared, ["default", index])
        return None

    def _answers_alone_decide(self) -> bool:
        """Whether the score reads nothing but the judge's answers and the options (so every
        score it can give shows on the sample item)."""
        judged = {step.id for step in self.plan.steps if step.sampling is not None}
        reads = set(self.score_step.reads)
        for name in list(reads):
            if name in judged or name in ("options", "score_values", "item", "rank"):
                reads.discard(name)
        return not reads

    def rounding(self) -> None:
        found = rounding_too_coarse(self.label, self.score_step.round, self.range)
        place = self.at("steps", self.score_index, "round") if "round" in self._score_raw() else self.score_at()
        if found is not None:
            self.problem(found, place)
        line = self.plan.pass_line.on_scale(scale_of(self.plan.options_model())).value if "round" in self._score_raw() else None
        across = rounding_across_the_line(self.label, self.score_step.round, self.range, line, self.plan.direction == "higher_is_better")
        if found is None and across is not None:
            self.warning("round-across-the-line", across, place)

    def _score_raw(self) -> Mapping[str, Any]:
        steps = self.raw.get("steps") or []
        raw = steps[self.score_index] if self.score_index < len(steps) else {}
        return raw if isinstance(raw, Mapping) else {}

    def rules(self) -> None:
        for tally in self.trials.rules:
            place = self._rule_place(tally.rule)
            if tally.accepted_within_bounds == 0 and tally.refused_within_bounds:
                # A warning: the bounds were worked out for the sample item; another item may leave room.
                self.warning(
                    "rule-refuses-every-answer",
                    f"{self.label}.{tally.step}: the rule `{' '.join(tally.rule.rule.check.split())}` refuses every answer the step's "
                    "schema and bounds let the judge give on a sample item: the judge would be asked again until its retries run out",
                    place,
                )
            elif tally.accepted == 0 and tally.refused:
                self.problem(
                    f"{self.label}.{tally.step}: the rule `{' '.join(tally.rule.rule.check.split())}` refuses every answer tried, "
                    "well formed as they are: the judge would be asked again until its retries run out",
                    place,
                )
            elif (gap := tally.refused_between()) is not None:
                refused, below, above = gap
                self.warning(
                    "rule-refuses-between",
                    f"{self.label}.{tally.step}: the rule `{' '.join(tally.rule.rule.check.split())}` accepts answers of {below} and of "
                    f"{above} items but refuses those of {refused}: the lengths it accepts are not one range; is a comparison the wrong "
                    "way round (`!=` for `>=`)?",
                    place,
                )
            elif tally.refused == 0 and tally.accepted and "options" not in tally.rule.check.reads:
                self.warning(
                    "rule-never-refuses",
                    f"{self.label}.{tally.step}: the rule `{' '.join(tally.rule.rule.check.split())}` accepts every answer tried "
                    "(empty and long lists among them): it never refuses one, so it checks nothing",
                    place,
                )

    def _rule_place(self, rule: Any) -> Place | None:
        written = rule.written_at
        if written is None:
            return self.at("steps")
        data, loc = written
        return position(data, [*loc, "check"], value=True) or position(data, loc)

    def skip_conditions(self) -> None:
        """A skip condition on earlier answers that is never true, or always; one on the item
        alone that is always true (the sample item has every field: never true proves nothing)."""
        judged = {step.id for step in self.plan.steps if step.sampling is not None}
        for step in self.plan.steps:
            if step.skip_if is None:
                continue
            on_answers = bool(step.skip_if.names & judged)
            reached = [trial for trial in self.trials.trials if step.id in trial.skipped or step.id in trial.ran]
            if not reached:
                continue
            skipped = sum(step.id in trial.skipped for trial in reached)
            if (skipped == 0 and on_answers) or skipped == len(reached):
                never = skipped == 0
                forced = list_kept_from_empty(dict(schema_paths(self.source, self.definition)), self.source.schemas_path[0], self._skip_text(step.id)) if never else None
                self.warning(
                    "skip-never" if never else "skip-always",
                    f"{self.label}.{step.id}.skip_if: `{self._skip_text(step.id)}` is {'never' if never else 'always'} true for every answer "
                    f"tried (empty and long lists among them): the step {'always runs' if never else 'never runs'}"
                    + (f"; the answer schema's `minItems: {forced[0]}` keeps the list from ever being empty (is it 0?)" if forced else ""),
                    forced[1] if forced else self.step_at(step.id, "skip_if"),
                )

    def _skip_text(self, step_id: str) -> str:
        spec = next(step for step in self.definition.steps if step.id == step_id)
        return " ".join(str(spec.skip_if).split())

    # -- what the answers mean ------------------------------------------------------------
    def direction(self) -> None:
        meanings = {name: meaning for name, meaning in self.trials.meanings.items() if name in self.trials.fields and self._read_by_the_score(name)}
        best, worst = self.trials.named("all good"), self.trials.named("all bad")
        if not meanings or best is None or worst is None or best.score is None or worst.score is None:
            return
        higher = self.plan.direction == "higher_is_better"
        declared = all(meaning.declared for meaning in meanings.values())
        if best.score == worst.score and empty_scores_nothing_relevant(self, meanings, worst, declared):
            return
        if best.score == worst.score:
            self._ignores(meanings, best, worst, declared)
            return
        if (best.score > worst.score) != higher:
            self._against(meanings, best, worst, declared)
            return
        if in_between_out_of_order(self, meanings, best):
            return
        for name in meanings:
            more = [trial.score for worse in range(1, 3) if (trial := self.trials.named(f"worse {name} {worse}")) is not None and trial.score is not None]
            scores = [best.score, *more, worst.score]
            for before, after in zip(scores, scores[1:]):
                if (after > before) if higher else (after < before):
                    self._finding(
                        declared, "score-against-meaning",
                        f"{self.label}.score: it improves as the answers get worse: from {before:g} to {after:g} when one more "
                        f"{leaf(name)} is {self._bad_value(meanings[name])}, for a score where {better_word(higher)} is better",
                        self._reader_of(name),
                    )
                    return

    def _against(self, meanings: Mapping[str, Meaning], best: Trial, worst: Trial, declared: bool) -> None:
        """The score points against `direction:`: said at the expression that counts the
        answers and at `direction:`, each where the author wrote it (both when both are theirs:
        either may be the mistake)."""
        higher = self.plan.direction == "higher_is_better"
        name, meaning = next(iter(meanings.items()))
        said = "as its schema declares" if meaning.declared else f"as its schema describes them ({meaning.evidence})" if meaning.evidence else "by their words"
        moves = (
            f"every {leaf(name)} {self._good_value(meaning)} scores {best.score:g} and every {leaf(name)} "
            f"{self._bad_value(meaning)} scores {worst.score:g}, {said}"
        )
        if meaning_against_description(self, name, meaning, moves) or description_against_name(self, name, meaning):
            return
        reader = self._reader_of(name)
        own = self.source.scorers.get(self.definition.id)
        direction = position(own, ["direction"], value=True) if isinstance(own, Mapping) else None
        reader_is_own = reader is not None and self._is_own(reader)
        if reader_is_own or direction is None:
            self._finding(
                declared, "score-against-meaning",
                f"{self.label}.score: the score moves against `direction: {self.plan.direction}`: {moves}; "
                f"a {better_word(higher)}-is-better score counts the {'good' if higher else 'bad'} answers",
                reader,
            )
        if direction is not None:
            self._finding(
                declared, "score-against-meaning",
                f"{self.label}.direction: {self.plan.direction} is the wrong way round for its score: {moves}",
                direction,
            )
        if reader_is_own or direction is not None:
            meaning_may_be_the_slip(self, name, meaning, moves)

    def _is_own(self, place: Place) -> bool:
        """Whether `place` is in the author's own files (not the built-in catalog's)."""
        fallback = self.source.fallback
        if fallback is None or place.file is None:
            return True
        builtin = [folder.resolve() for folder in (fallback.path, *fallback.templates_path[:1], *fallback.schemas_path[:1])]
        return not any(Path(place.file).resolve().is_relative_to(folder) for folder in builtin)

    def _read_by_the_score(self, name: str) -> bool:
        """Whether the score's own expressions (or a computed step's) name the field: a
        field the score never reads has no say in its direction."""
        field = leaf(name)
        written = [step for step in self.raw.get("steps") or [] if isinstance(step, Mapping) and step.get("kind") in ("score", "compute")]
        return any(re.search(rf"\b{re.escape(field)}\b", json.dumps(step, default=str)) for step in written)

    def _ignores(self, meanings: Mapping[str, Meaning], best: Trial, worst: Trial, declared: bool) -> None:
        """Every answer good and every answer bad score the same: the score does not hear the
        judge. Said at the skip condition that left the judged step out, when one did, else where
        the score reads the answers."""
        name, meaning = next(iter(meanings.items()))
        step = name.partition(".")[0]
        moves = f"every {leaf(name)} {self._good_value(meaning)} and every {leaf(name)} {self._bad_value(meaning)} both score {best.score:g}"
        if step in best.skipped and step in worst.skipped:
            self.warning(
                "score-ignores-answers",
                f"{self.label}.{step}.skip_if: `{self._skip_text(step)}` skips the step on the answers it has to judge: {moves}",
                self.step_at(step, "skip_if"),
            )
        elif any(step in trial.ran for trial in (best, worst)):
            self.warning("score-ignores-answers", f"{self.label}.score: the score does not move with the judge's answers: {moves}", self._reader_of(name))

    def _finding(self, declared: bool, code: str, message: str, place: Place | None) -> None:
        if declared:
            self.problem(message, place)
        else:
            self.warning(code, message, place)

    def _good_value(self, meaning: Meaning) -> str:
        return self._valued(meaning, "good")

    def _bad_value(self, meaning: Meaning) -> str:
        return self._valued(meaning, "bad")

    @staticmethod
    def _valued(meaning: Meaning, polarity: str) -> str:
        if meaning.better is not None:
            return f"at its {'greatest' if (polarity == 'good') == (meaning.better == 'higher') else 'least'} ({polarity})"
        value = next((value for value, said in (meaning.polarities or {}).items() if said == polarity), None)
        return meaning.described(value)

    def _reader_of(self, name: str) -> Place | None:
        """Where the score reads the field `name` (STEP.PATH), in the author's own file when
        the author wrote the score's expression over values a base scorer brings (an
        extension's `score: "hallucinated * options.scale"`): that line is theirs to fix."""
        reader = self._counter_of(name)
        own_score = self.score_at()
        if reader is not None and not self._is_own(reader) and own_score is not None and self._is_own(own_score):
            return own_score
        return reader

    def _counter_of(self, name: str) -> Place | None:
        """Where the score reads the field `name` (STEP.PATH): the value whose items are its
        list and whose condition names it, else any value naming its step, else the score's
        expression when it names the step, else the score step. A value the score's
        expression does not name (one a base scorer brings) is passed over."""
        step_id, _, path = name.partition(".")
        listed, _, last = path.rpartition("[].")
        last = last or path
        expression = self._score_raw().get("score")
        written = {
            value_name: value for value_name, value in (self._score_raw().get("values") or {}).items()
            if not isinstance(expression, str) or re.search(rf"\b{re.escape(str(value_name))}\b", expression)
        }
        for value_name, value in written.items():
            if isinstance(value, Mapping) and f"{step_id}.{listed}" in str(value.get("items", "")):
                for key in ("where", "value"):
                    if last in str(value.get(key, "")):
                        return self.at("steps", self.score_index, "values", value_name, key)
                return self.at("steps", self.score_index, "values", value_name, "items")
        for value_name, value in written.items():
            if isinstance(value, str) and step_id in value:
                return self.at("steps", self.score_index, "values", value_name)
        if isinstance(expression, str) and re.search(rf"\b{re.escape(step_id)}\b", expression):
            return self.at("steps", self.score_index, "score") or self.score_at()
        return self.score_at()


def _words_of(answer: Any) -> Iterator[str]:
    """The short texts of an answer (a label, a verdict), at any depth."""
    return (text for text in texts_in(answer) if len(text) <= 80)


def proved(source: CatalogSource, definition: ScorerDefinition, trials: Trials, score_range: tuple[float, float] | None, compile: Compile) -> list[ConfigError]:
    return ScorerProof(source, definition, trials, score_range, compile).findings()


def schema_paths(source: CatalogSource, definition: ScorerDefinition) -> Iterator[tuple[str, Path]]:
    """Each judged step's id and the schema file it answers with."""
    for step in definition.steps:
        written = step_kind(step.kind).sources(step).schema
        if written is None:
            continue
        path = source.schema_file(written.text)
        if path is not None:
            yield step.id, path


"""A scorer run on answers made from its own schemas: the plan's every step as it runs for a
real item (bounds worked out per request, rules enforced, skip conditions, the score, the
reason), with a stand-in judge that answers each request as a scenario says. No model is
called; what comes out is what the scorer would do with each answer.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from ...errors import ConfigError, ExpressionError, NotScorable
from ...formatting import refusal
from ...judge import JudgeAnswer, JudgeRequest
from ...scoring.answer_scope import current_answer_scope, outside_answer_scope
from ...scoring.plan import ScorerPlan
from ...scoring.preview import SAMPLE_ITEM, sample_item
from ...scoring.scorer import Scorer
from ...scoring.steps.judged import JudgedPlan
from ..answer_rules import CompiledRule, answer_rules
from .answers import MOST_ITEMS, AnswerMaker, ListLength, Pick, Scenario, choice_fields
from .meanings import Meaning, Polarity

#: The most scenarios tried as every combination of the choice fields' values; past it, each
#: field's values are tried one field at a time.
MOST_COMBINATIONS = 48


@dataclass
class Trial:
    """What the scorer did with one scenario's answers."""

    scenario: Scenario
    answers: dict[str, Any] = field(default_factory=dict)
    score: float | None = None
    not_scorable: str | None = None
    #: Why the run failed (an expression given what it cannot take, a division by zero ...),
    #: and where, when the error says (FILE, LINE, COLUMN).
    error: str | None = None
    error_at: tuple[str, int | None, int | None] | None = None
    #: A step whose own schema and rules refused the answer made for it.
    refused: tuple[str, str] | None = None
    #: The ids of the steps that were skipped, and of those that ran.
    skipped: frozenset[str] = frozenset()
    ran: frozenset[str] = frozenset()
    #: What each step gave (its record's result), by step id.
    results: dict[str, Any] = field(default_factory=dict)

    @property
    def scored(self) -> bool:
        return self.score is not None


@dataclass
class RuleTally:
    """What one rule did with the answers tried on it: all of them, and those within the
    request's bounds (answers a judge decoding under the schema sent could give)."""

    rule: CompiledRule
    step: str
    accepted: int = 0
    refused: int = 0
    accepted_within_bounds: int = 0
    refused_within_bounds: int = 0
    #: Whether the rule held, by the length of the answer's first list (answers of every
    #: length the shapes below make, within the bounds or not).
    by_length: dict[int, set[bool]] = field(default_factory=dict)

    def refused_between(self) -> tuple[int, int, int] | None:
        """A length every answer of which the rule refused, between two lengths it always
        accepted (refused, the length below, the length above); None when what it accepts is
        one range."""
        accepted = sorted(length for length, held in self.by_length.items() if held == {True})
        for length in sorted(length for length, held in self.by_length.items() if held == {False}):
            below = [other for other in accepted if other < length]
            above = [other for other in accepted if other > length]
            if below and above:
                return length, below[-1], above[0]
        return None


class _Refused(Exception):
    def __init__(self, step: str, why: str) -> None:
        self.step, self.why = step, why


class BoundaryJudge:
    """Stands in for the judge: answers each request as the scenario says, made from the
    request's own (bounded) schema; tries every rule of the step on that answer and on
    answers of other lengths that the schema alone accepts."""

    model = "check/answers-from-the-schema"

    def __init__(self, maker: AnswerMaker, tallies: dict[int, RuleTally], unbounded: Mapping[str, type[BaseModel]]) -> None:
        self.maker = maker
        self.tallies = tallies
        self.unbounded = unbounded
        self.answers: dict[str, Any] = {}
        self.schemas: dict[str, dict[str, Any]] = {}

    async def ask(self, request: JudgeRequest) -> JudgeAnswer:
        model = request.response_model
        if model is None:
            return JudgeAnswer(value="A reason.")
        if self.maker.scenario.unbounded:
            model = self.unbounded[request.step]
        schema = schema_of(model)
        self.schemas[request.step] = schema
        answer = self.maker.answer(request.step, schema)
        self.answers[request.step] = answer
        self._try_rules(request.step, model, answer)
        try:
            return JudgeAnswer(value=model.model_validate(answer))
        except ValidationError as exc:
            raise _Refused(request.step, refusal(exc)) from None

    def _try_rules(self, step: str, model: type[BaseModel], answer: Any) -> None:
        rules = answer_rules(model)
        scope = current_answer_scope()
        if not rules or scope is None:
            return
        unbounded = self.unbounded[step]
        schema = schema_of(unbounded)
        candidates = [answer]
        # Answers of other lengths than the bounds allow, on a few scenarios: they tell a rule
        # that refuses some answers from one that refuses none.
        shapes: tuple[tuple[ListLength, int, bool], ...] = (
            ("least", 0, False), ("one", 0, False), ("most", MOST_ITEMS, False), ("most", MOST_ITEMS + 2, False), ("most", MOST_ITEMS, True), ("one", MOST_ITEMS, True)
        ) if self.maker.scenario.label in _RULE_SCENARIOS else ()
        for length, most, uneven in shapes:
            other = AnswerMaker(dataclasses.replace(self.maker.scenario, lists=length, most=most or MOST_ITEMS, uneven=uneven), self.maker.meanings, self.maker.positional)
            candidates.append(other.answer(step, schema))
        for index, candidate in enumerate(candidates):
            with outside_answer_scope():
                try:
                    (model if index == 0 else unbounded).model_validate(candidate)
                except ValidationError:
                    continue
            variables = {**scope, **candidate} if isinstance(candidate, Mapping) else dict(scope)
            for rule in rules:
                tally = self.tallies.setdefault(id(rule), RuleTally(rule, step))
                holds = rule.failure(variables) is None
                items = _first_list_length(candidate)
                if items is not None:
                    tally.by_length.setdefault(items, set()).add(holds)
                tally.accepted += holds
                tally.refused += not holds
                if index == 0:  # the answer made within the request's bounds
                    tally.accepted_within_bounds += holds
                    tally.refused_within_bounds += not holds


def _first_list_length(answer: Any) -> int | None:
    """How many items the first list of an answer holds (None: it has none)."""
    if isinstance(answer, Mapping):
        return next((len(value) for value in answer.values() if isinstance(value, list)), None)
    return None


#: The scenarios on which rules are also tried with answers of other lengths.
_RULE_SCENARIOS = frozenset({"first values", "rotated 0", "empty lists", "all good", "all bad"})
#: Each answer model's JSON schema, made once (pydantic makes it anew on every call).
_schemas: dict[type[BaseModel], dict[str, Any]] = {}


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    if model not in _schemas:
        if len(_schemas) > 1024:
            _schemas.clear()
        _schemas[model] = model.model_json_schema()
    return _schemas[model]


@dataclass
class Trials:
    """Every scenario tried on one scorer, and what its rules did."""

    plan: ScorerPlan
    trials: list[Trial]
    rules: list[RuleTally]
    meanings: Mapping[str, Meaning]
    #: The choice fields of the judged steps (qualified paths) and their values on the sample item.
    fields: Mapping[str, list[Any]]
    #: The answers' lists empty though the request's bounds ask for items (an output with no
    #: sentence, say), when they do: apart from `trials`, as no judge decoding under the bounds
    #: sent for the sample item could answer so.
    nothing_to_judge: Trial | None = None

    def scored(self) -> list[Trial]:
        return [trial for trial in self.trials if trial.scored]

    def named(self, label: str) -> Trial | None:
        return next((trial for trial in self.trials if trial.scenario.label == label), None)


class _Unread:
    """A judged step's prompt in a trial: the stand-in judge answers from the schema and never
    reads it, and rendering every template of every scorer would be most of a check's time
    (what a template does with the run's values is the template checks' to say)."""

    names: frozenset[str] = frozenset()

    def render(self, variables: Mapping[str, Any]) -> str:
        return ""


def without_prompts(plan: ScorerPlan) -> ScorerPlan:
    """`plan` with its judged steps' prompts left unrendered (see `_Unread`)."""
    steps = tuple(dataclasses.replace(step, prompt=_Unread(), system=None) if isinstance(step, JudgedPlan) else step for step in plan.steps)
    return dataclasses.replace(plan, steps=steps)


async def _trial(made: Scorer, scenario: Scenario, meanings: Mapping[str, Meaning], positional: frozenset[str], tallies: dict[int, RuleTally]) -> Trial:
    plan = made.plan
    unbounded = {step.id: step.answer_model for step in plan.steps if step.answer_model is not None}
    judge = BoundaryJudge(AnswerMaker(scenario, meanings, positional), tallies, unbounded)
    trial = Trial(scenario)
    try:
        scorer = made.with_judge(judge)
        item = sample_item(plan)
        if scenario.blank_item:  # and an output that is plain text: an agent that called no tool
            item = dataclasses.replace(item, output=SAMPLE_ITEM.output, input="", ground_truth="", context=[])
        if scenario.empty_output:
            item = dataclasses.replace(item, output="")
        result = await scorer.ascore(item)
    except _Refused as refused:
        trial.refused = (refused.step, refused.why)
    except NotScorable as exc:
        trial.not_scorable = exc.message
        trial.ran, trial.skipped = _before_a_skip_left_unscored(plan, exc.message, frozenset(judge.answers))
    except (ConfigError, ExpressionError) as exc:
        trial.error = exc.message
        # An expression's error leads with where it is written (FILE:LINE:COLUMN: ...), after
        # the scorer's id when the scorer's run says which scorer failed.
        placed = re.match(r"(?:[\w.-]+: )?(?P<file>[^:]+):(?P<line>\d+):(?P<column>\d+): (?P<message>.*)", exc.message, re.DOTALL)
        if placed is not None:
            trial.error = placed["message"]
            trial.error_at = (placed["file"], int(placed["line"]), int(placed["column"]))
    except (ArithmeticError, TypeError, ValueError) as exc:
        trial.error = f"{type(exc).__name__}: {exc}"
    else:
        trial.score = result.score
        trial.skipped = frozenset(step for step, record in result.steps.items() if record.skipped)
        trial.ran = frozenset(step for step, record in result.steps.items() if not record.skipped)
        trial.results = {step: record.result for step, record in result.steps.items()}
    trial.answers = judge.answers
    return trial


def _before_a_skip_left_unscored(plan: ScorerPlan, message: str, asked: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """The steps that ran and those skipped, when a step's skip left the item not scorable
    (its `on_skip` is `message`): the judged steps before it ran when the judge was asked and
    were skipped when not. Nothing is known of a run stopped before any step."""
    ids = [step.id for step in plan.steps]
    stopping = next((step for step in plan.steps if step.skip_if is not None and getattr(step, "on_skip", None) == message), None)
    if stopping is None:
        return frozenset(), frozenset()
    before = [step for step in plan.steps[: ids.index(stopping.id)] if step.sampling is not None]
    return frozenset(step.id for step in before if step.id in asked), frozenset({stopping.id, *(step.id for step in before if step.id not in asked)})


def scenarios(fields: Mapping[str, list[Any]], meanings: Mapping[str, Meaning]) -> list[Scenario]:
    """The scenarios tried on a scorer whose judged steps have these choice fields: every
    combination of their values (one field at a time when there are too many), each value in
    each position, lists empty, of one item and as long as allowed, optional fields left out,
    and, where the values' meanings are known, all good, all bad, each field in between (where a
    value is declared neither) and bad alone and worse one item at a time."""
    names = list(fields)
    found: list[Scenario] = [Scenario("first values", default=Pick(index=0))]
    sizes = [len(fields[name]) for name in names]
    combinations = 1
    for size in sizes:
        combinations *= size
    if names and combinations <= MOST_COMBINATIONS:
        for indexes in itertools.product(*(range(size) for size in sizes)):
            if not any(indexes):
                continue  # the first values, tried above
            found.append(Scenario(f"values {indexes}", picks={name: Pick(index=index) for name, index in zip(names, indexes)}))
    else:
        for name, size in zip(names, sizes):
            found += [Scenario(f"{name} value {index}", picks={name: Pick(index=index)}, default=Pick(index=0)) for index in range(1, size)]
        found += [Scenario(f"every value {index}", default=Pick(index=index)) for index in range(1, max(sizes, default=1))]
    widest = max(sizes, default=1)
    # Each value in each position: one rotation holds every value where there are two; a second
    # where there are more.
    found += [Scenario(f"rotated {shift}", default=Pick(rotate=shift), most=max(widest, 3)) for shift in range(1 if widest <= 2 else 2)]
    found += [
        Scenario("empty lists", lists="least", default=Pick(index=0)),
        Scenario("blank item", lists="least", default=Pick(index=0), blank_item=True),
        Scenario("blank item, long lists", default=Pick(index=0), blank_item=True),
        Scenario("one item", lists="one", default=Pick(index=0)),
        Scenario("optional fields left out", omit_optional=True, default=Pick(index=0)),
    ]
    if meanings:
        found += [Scenario("all good", default=Pick(index=0), picks={name: Pick(polarity=("good",)) for name in meanings})]
        found += [Scenario("all bad", default=Pick(index=0), picks={name: Pick(polarity=("bad",)) for name in meanings})]
        for name in (name for name, meaning in meanings.items() if "neutral" in (meaning.polarities or {}).values()):
            # A field's in-between value, then its bad one, the others good: the first scores between all good and the second.
            found += [
                Scenario(f"{polarity} {name}", default=Pick(index=0), picks={other: Pick(polarity=(polarity if other == name else "good",)) for other in meanings})
                for polarity in ("neutral", "bad")
            ]
        for name in (name for name in meanings if "[]" in name):  # a field of list items gets worse item by item
            for worse in range(1, 3):  # 3 of 3 bad is "all bad"
                polarity = (_BAD,) * worse + (_GOOD,) * (3 - worse)
                picks = {other: Pick(polarity=("good",)) for other in meanings}
                picks[name] = Pick(polarity=polarity)
                found.append(Scenario(f"worse {name} {worse}", default=Pick(index=0), picks=picks))
    return found


def run_trials(plan: ScorerPlan, options: Mapping[str, Any], meanings: Mapping[str, Meaning]) -> Trials | None:
    """The plan run on every scenario, or None when it cannot run on the sample item without
    options the author must give (an abstract scorer). A plan whose fingerprint (definition,
    templates, schemas) and meanings were tried before in this process is not run again."""
    key = (plan.fingerprint, plan.id, repr(sorted(options.items())), repr(sorted(meanings.items())))
    if key not in _tried:
        if len(_tried) > 512:
            _tried.clear()
        _tried[key] = asyncio.run(_run_trials(plan, options, meanings))
    return _tried[key]


_GOOD: Polarity = "good"
_BAD: Polarity = "bad"
_tried: dict[tuple[str, str, str, str], Trials | None] = {}


async def _run_trials(plan: ScorerPlan, options: Mapping[str, Any], meanings: Mapping[str, Meaning]) -> Trials | None:
    tallies: dict[int, RuleTally] = {}
    plan = without_prompts(plan)
    probe = BoundaryJudge(AnswerMaker(Scenario("probe", default=Pick(index=0)), meanings, frozenset()), {}, {step.id: step.answer_model for step in plan.steps if step.answer_model is not None})
    try:
        # Made once, its options validated once: each scenario asks it through a judge of its own.
        made = Scorer(plan, probe, dict(options))
    except ConfigError:
        return None
    try:
        await made.ascore(sample_item(plan))
    except Exception:  # noqa: BLE001 - the scenarios below say what fails, and why
        pass
    fields: dict[str, list[Any]] = {}
    static: set[str] = set()
    for step in plan.steps:
        if step.answer_model is not None:
            static |= {f"{step.id}.{path}" for path in choice_fields(schema_of(step.answer_model))}
        # The request's schema where the probe asked one (its bounds worked out), else the step's own.
        asked = probe.schemas.get(step.id) or (schema_of(step.answer_model) if step.answer_model is not None else None)
        if asked is not None:
            fields |= {f"{step.id}.{path}": domain for path, domain in choice_fields(asked).items()}
    # A field given its values by the earlier answers (the statements a verdict copies) is
    # filled in their order; one the author's schema gives values (a verdict) is a choice.
    positional = frozenset(name for name in fields if name not in static and _copies_texts(name, plan))
    chosen = {name: domain for name, domain in fields.items() if name not in positional}
    # An output scored though empty: a judge given it finds nothing in it (its lists empty).
    empty = [Scenario("empty output", lists="least", default=Pick(index=0), empty_output=True)] if plan.empty_output == "score" else []
    unbounded = Scenario("nothing to judge", lists="least", default=Pick(index=0), unbounded=True)
    *tried, nothing = await asyncio.gather(*(_trial(made, scenario, meanings, positional, tallies) for scenario in [*scenarios(chosen, meanings), *empty, unbounded]))
    return Trials(plan, list(tried), list(tallies.values()), meanings, chosen, nothing)


def _copies_texts(name: str, plan: ScorerPlan) -> bool:
    """Whether a field's values come from a list of texts of an earlier step (`enum:` bound
    to an earlier answer): copies such as a verdict's statement."""
    step_id, _, path = name.partition(".")
    step = plan.step(step_id)
    for bound in getattr(step, "bounds", ()):
        if bound.keyword == "enum" and bound.path == path and not isinstance(bound.value, (list, tuple)):
            return any(other.id in bound.value.names for other in plan.steps if other.id != step_id)
    return False


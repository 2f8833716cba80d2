"""Where a run happens and a score is computed: a Scorer runs the steps of one plan for one
output and returns a ScoreResult.

The scorer knows neither particular scorers nor particular step kinds: it runs each step
through its kind (`steps/`), in waves of steps that do not read each other, and what a
step asks, how its answer is checked and how the score is reduced all come from the plan.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import math
import time
import uuid
from collections.abc import Coroutine, Mapping
from typing import Any

from pydantic import ValidationError

from ..errors import ConfigError
from ..judge import AsksJudge, JudgeConfig
from .calls import ScoringCalls
from .confidence import ConfidenceMap, weighed_score
from .context import ContextList, ContextSources, GetContext, context_strings
from .pass_line import PassLine, scale_of
from .passing import REASON_POLICIES, ReasonPolicy, reason_wanted
from .inputs import context_within_limit, prepared_run, run_variables
from .plan import ScorerPlan, StepPlan
from .results import Run, ScoreResult, StepRecord
from .run_input import RunInput
from .steps import StepCall, step_kind

class Scorer(ScoringCalls):
    """A scorer created from a plan, a judge and options. `judge_config` (how the judge is
    reached and asked) is part of the scorer's fingerprint when given."""

    def __init__(self, plan: ScorerPlan, judge: AsksJudge, options: dict[str, Any], judge_config: JudgeConfig | None = None) -> None:
        self.plan = plan
        self.judge = judge
        self.judge_config = judge_config
        get_context: GetContext | None = options.pop("get_context", None)
        if get_context is not None and not callable(get_context):
            raise ConfigError(f"{self.id}: option get_context must be a callable (run, step) -> list[str]")
        static = options.pop("context", None)
        self.context: ContextList | None = context_strings(static, f"{self.id}: option context") if static is not None else None
        self.get_context = get_context
        self.contexts = ContextSources(self.id, self.context, get_context, plan.context_from_tool_results, "context" in plan.requires)
        try:
            self.options = plan.options_model.model_validate(options)
        except ValidationError as exc:
            first = exc.errors()[0]
            name = ".".join(map(str, first["loc"]))
            known = ", ".join(["context", "get_context", *plan.options_model.model_fields])
            detail = f"unknown option (known: {known})" if first["type"] == "extra_forbidden" else first["msg"]
            raise ConfigError(f"{self.id}: option {name}: {detail} (got {first.get('input')!r})") from None
        for name, value in self.options.model_dump().items():
            if isinstance(value, float) and not math.isfinite(value):
                raise ConfigError(f"{self.id}: option {name}: must be a finite number (got {value!r})")
        failures = [message for rule in plan.option_rules if (message := rule.failure({"options": self.options.model_dump()}))]
        if failures:
            raise ConfigError(f"{self.id}: options: {'; '.join(failures)}")
        self._waves = _waves(plan)
        self.fingerprint = self._fingerprint()
        #: Where its scores pass: the definition's line, on the scale its options set (a run
        #: may move it: `with_reasons`).
        self.pass_line: PassLine = plan.pass_line.on_scale(scale_of(self.options))
        #: Which scores get a reason from the judge (those past `pass_line` for `failing`).
        self.reasons: ReasonPolicy = "always"
        #: The map kept for this version by `scorers calibrate --fit-confidence`, if any: each
        #: item's confidence then gets its calibrated value beside it.
        self.confidence_map: ConfidenceMap | None = None

    def with_reasons(self, policy: ReasonPolicy, threshold: float | None = None) -> Scorer:
        """The same scorer asking the judge for the reasons `policy` names (see passing.py),
        a score passing at `threshold` (else the one given before, e.g. by the cascade this
        scorer judges first in, else the definition's, else half the scale). The scores, and so
        the fingerprint, are the same whatever the policy."""
        if policy not in REASON_POLICIES:
            raise ConfigError(f"reasons {policy!r}: choose one of {', '.join(REASON_POLICIES)}", parameter="reasons")
        changed = copy.copy(self)
        changed.reasons, changed.pass_line = policy, self.pass_line.overridden(threshold)
        return changed

    def with_judge(self, judge: AsksJudge) -> Scorer:
        """The same scorer (plan, options, context) asking `judge` instead."""
        changed = copy.copy(self)
        changed.judge = judge
        return changed

    def _fingerprint(self) -> str:
        """What decides whether a stored result of this scorer still answers the same question:
        the definition, templates and schemas (the plan's fingerprint), the options, the
        context given at creation, and the judge: model, mode and every step's sampling."""
        config = self.judge_config
        described = {
            "plan": self.plan.fingerprint,
            "options": self.options.model_dump(mode="json"),
            "context": self.context,
            "get_context": getattr(self.get_context, "__qualname__", None) if self.get_context is not None else None,
            "model": self.judge.model,
            "mode": config.mode if config is not None else None,
            "sampling": {step.id: step.sampling.model_dump() for step in self.plan.steps if step.sampling is not None},
            "max_input_chars": [self.plan.max_input_chars, self.plan.long_input],
        }
        return hashlib.sha256(json.dumps(described, sort_keys=True, default=str).encode()).hexdigest()[:16]

    @property
    def id(self) -> str:
        return self.plan.id

    def __repr__(self) -> str:
        return f"Scorer({self.id!r}, model={self.judge.model!r})"

    @property
    def scored_by(self) -> tuple[ScorerPlan, str]:
        return self.plan, self.judge.model

    async def _ascore(self, given: RunInput, get_context: GetContext | None, sample: int) -> ScoreResult:
        started = time.perf_counter()
        run = prepared_run(self.plan, given)
        run_context = context_strings(given.context, "context") if given.context is not None else None
        if "context" in self.plan.requires and get_context is None and self.get_context is None:
            # Without get_context the context is already known: a run that has none fails
            # here, before the judge is paid for steps that come ahead of the context's use.
            await self.contexts.resolve("", run, run_context)
        variables = run_variables(run, given, self.options.model_dump())
        done: dict[str, tuple[StepRecord, ContextList | None]] = {}
        call = StepCall(self.id, self.judge, sample)

        async def run_step(step: StepPlan) -> None:
            record, step_context = await self._run_step(step, run, run_context, get_context, variables, call, done)
            done[step.id] = record, step_context
            kind = step_kind(step.kind)
            variables.update(kind.variables(step, record.result))
            if kind.result_part == "score" and not record.skipped:
                await self._weigh(step, record, {name: ran for name, (ran, _) in done.items()}, variables, call, run.run_id)

        for wave in self._waves:
            if len(wave) == 1:
                await run_step(wave[0])
            else:
                await _together([run_step(step) for step in wave])
        reason: str | None = None
        used_context: ContextList | None = None
        records: dict[str, StepRecord] = {}
        for step in self.plan.steps:  # in the plan's order, whatever order they finished in
            record, step_context = done[step.id]
            records[step.id] = record
            used_context = step_context or used_context
            if step_kind(step.kind).result_part == "reason":
                reason = record.result
        score = variables.get("score")
        assert isinstance(score, float)  # a plan has exactly one score step
        return ScoreResult(
            run_id=run.run_id,
            scorer_id=self.id,
            scorer_hash=self.plan.fingerprint,
            model=self.judge.model,
            score=score,
            reason=reason,
            steps=records,
            context=used_context,
            duration_ms=(time.perf_counter() - started) * 1000,
        )

    async def _weigh(self, step: StepPlan, record: StepRecord, records: Mapping[str, StepRecord], variables: dict[str, Any], call: StepCall, seed: str) -> None:
        """The score step's confidence and expected score, from the verdicts' probabilities
        (see confidence.py); a score declared as the expected value becomes it."""
        weighed = await weighed_score(self.plan, step, records, variables, self.pass_line, call, seed)
        if weighed is None:
            return
        record.confidence, expected = round(weighed[0], 4), weighed[1]
        if self.confidence_map is not None:
            record.calibrated_confidence = round(self.confidence_map(weighed[0]), 4)
        rounding = getattr(step, "round", None)
        record.expected_score = round(expected, rounding) if rounding is not None else expected
        if getattr(step, "expected_value", False):
            record.result = {**record.result, "plain_score": record.result["score"], "score": record.expected_score}
            variables.update(step_kind(step.kind).variables(step, record.result))

    def _reason_not_asked(self, scope: Mapping[str, Any], records: Mapping[str, StepRecord]) -> str | None:
        score = scope.get("score")
        if self.reasons == "always" or not isinstance(score, float):
            return None
        confidence = next((record.confidence for record in records.values() if record.kind == "score"), None)
        return reason_wanted(self.reasons, score, self.pass_line, confidence)

    async def areason(self, given: RunInput, steps: Mapping[str, StepRecord], sample: int = 0) -> StepRecord | None:
        """The reason of a result scored before (its steps' records, as stored), asked of the
        judge now: the reason step run on the run's variables and those steps' results, as it
        would have run then. None for a scorer without a reason step."""
        reason = next((step for step in self.plan.steps if step_kind(step.kind).result_part == "reason"), None)
        if reason is None:
            return None
        given = given if given.run_id else given.with_run_id(str(uuid.uuid4()))
        run = prepared_run(self.plan, given)
        run_context = context_strings(given.context, "context") if given.context is not None else None
        variables = run_variables(run, given, self.options.model_dump())
        for step in self.plan.steps:
            if step is not reason and step.id in steps:
                variables.update(step_kind(step.kind).variables(step, steps[step.id].result))
        asked = self.with_reasons("always")
        record, _ = await asked._run_step(reason, run, run_context, None, variables, StepCall(self.id, self.judge, sample))
        return record

    async def _run_step(
        self,
        step: StepPlan,
        run: Run,
        run_context: ContextList | None,
        get_context: GetContext | None,
        variables: dict[str, Any],
        call: StepCall,
        done: Mapping[str, tuple[StepRecord, ContextList | None]] | None = None,
    ) -> tuple[StepRecord, ContextList | None]:
        """The step's record, and the context it was given (None when it read none); `done`:
        the steps run before it (a reason step reads the score's confidence there)."""
        started = time.perf_counter()
        kind = step_kind(step.kind)
        scope = dict(variables)
        # The context is resolved (get_context called) only for steps that use it, and only
        # once the step is known to run, unless its skip condition itself reads the context.
        if step.uses_context and step.skip_if is not None and "context" in step.skip_if.names:
            scope["context"] = await self.contexts.resolve(step.id, run, run_context, get_context)
        if step.skip_if is not None and call.evaluate(step.skip_if, scope):
            return StepRecord(id=step.id, kind=step.kind, skipped=True, result=kind.skipped(step, scope)), scope.get("context")
        if kind.result_part == "reason" and (why := self._reason_not_asked(scope, {name: ran for name, (ran, _) in (done or {}).items()})) is not None:
            return StepRecord(id=step.id, kind=step.kind, skipped=True, not_asked=why), None
        if step.uses_context and "context" not in scope:
            scope["context"] = await self.contexts.resolve(step.id, run, run_context, get_context)
        if "context" in scope:
            scope["context"] = context_within_limit(self.plan, scope["context"])
        record = await kind.run(step, scope, call)
        record.duration_ms = (time.perf_counter() - started) * 1000
        return record, scope.get("context")


def _waves(plan: ScorerPlan) -> list[list[StepPlan]]:
    """The plan's steps in waves: each step comes one wave after the latest step it reads,
    and the steps of a wave run at the same time."""
    level: dict[str, int] = {}
    waves: list[list[StepPlan]] = []
    for step in plan.steps:
        level[step.id] = max((level[other] + 1 for other in plan.depends_on(step)), default=0)
        if level[step.id] == len(waves):
            waves.append([])
        waves[level[step.id]].append(step)
    return waves


async def _together(runs: list[Coroutine[Any, Any, None]]) -> None:
    """Run the steps of one wave at once; when one fails, the others are cancelled (their
    answers would be thrown away with the run)."""
    tasks = [asyncio.ensure_future(one) for one in runs]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise

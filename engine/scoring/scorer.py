"""Where a run happens and a score is computed: a Scorer runs the steps of one plan for one
output and returns a ScoreResult.

The scorer knows kinds of steps (judge, score, reason), never particular scorers: what a
step asks, how its answer is checked and how the score is reduced all come from the plan.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import logging
import math
import time
import uuid
from collections.abc import Coroutine, Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError, ExpressionError, NotScorable, RunInputError
from ..formatting import plain, to_json
from ..judge import AsksJudge, JudgeConfig, JudgeRequest
from ..sync import run_sync
from .answer_scope import answer_scope
from .context import ContextList, ContextSources, GetContext, context_strings
from .plan import (
    AnyStepPlan,
    ComputeStepPlan,
    Evaluable,
    JudgeStepPlan,
    ReasonStepPlan,
    ScorerPlan,
    ScoreStepPlan,
)
from .results import Run, ScoreResult, StepRecord
from .tracing import record_score, scorer_span
from .transcripts import (
    as_messages,
    assistant_text,
    conversation_turns,
    extract_tool_calls,
    extract_tool_results,
    role_text,
    split_conversation,
)

logger = logging.getLogger("engine.scoring")


class Scorer:
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
            "sampling": {step.id: step.sampling.model_dump() for step in self.plan.steps if isinstance(step, (JudgeStepPlan, ReasonStepPlan))},
            "max_input_chars": [self.plan.max_input_chars, self.plan.long_input],
        }
        return hashlib.sha256(json.dumps(described, sort_keys=True, default=str).encode()).hexdigest()[:16]

    @property
    def id(self) -> str:
        return self.plan.id

    def __repr__(self) -> str:
        return f"Scorer({self.id!r}, model={self.judge.model!r})"

    def run(
        self,
        output: Any = None,
        input: Any = None,  # noqa: A002 - the name users know from the run's fields
        ground_truth: Any = None,
        run_id: str | None = None,
        context: list[str] | None = None,
        get_context: GetContext | None = None,
        turns: list[Any] | None = None,
        expected_trajectory: list[Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> ScoreResult:
        """Score one output (sync wrapper of `arun`)."""
        return run_sync(
            self.arun(
                output, input=input, ground_truth=ground_truth, run_id=run_id, context=context, get_context=get_context,
                turns=turns, expected_trajectory=expected_trajectory, metadata=metadata,
            )  # fmt: skip
        )

    async def arun(
        self,
        output: Any = None,
        input: Any = None,  # noqa: A002
        ground_truth: Any = None,
        run_id: str | None = None,
        context: list[str] | None = None,
        get_context: GetContext | None = None,
        turns: list[Any] | None = None,
        expected_trajectory: list[Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        sample: int = 0,
    ) -> ScoreResult:
        """Score one output. `output` is text or chat messages. `context` and `get_context`
        are for this run only: `get_context` wins over the scorer's own, and `context` is
        used when there is none, before the scorer's static context.

        `turns` is a whole conversation (chat messages, tool calls included): conversation
        scorers read all of it; for the others, when `output` (or `input`) is not given, it
        is the reply after the last user message (and that message's text).
        `expected_trajectory` lists the tool calls expected (names, or `{tool_name, args}`).
        `metadata` (an item's own material: a rubric, a reference) is the `metadata`
        variable of every template and expression. `sample` numbers a repeated judgement of
        the same output (each judge request carries it)."""
        run_id = run_id or str(uuid.uuid4())
        with scorer_span(self.id, self.plan.fingerprint, run_id, self.judge.model) as span:
            result = await self._arun(output, input, ground_truth, run_id, context, get_context, turns, expected_trajectory, metadata, sample)
            record_score(span, result.score, result.reason)
            return result

    async def _arun(
        self,
        output: Any,
        input: Any,  # noqa: A002
        ground_truth: Any,
        run_id: str,
        context: list[str] | None,
        get_context: GetContext | None,
        turns: list[Any] | None,
        expected_trajectory: list[Any] | None,
        metadata: Mapping[str, Any] | None,
        sample: int,
    ) -> ScoreResult:
        started = time.perf_counter()
        if turns is not None:
            if not isinstance(turns, (list, tuple)):
                raise RunInputError(f"{self.id}: `turns` must be a list of chat messages, got {type(turns).__name__}")
            last_input, last_reply = split_conversation(turns)
            output = last_reply if output is None else output
            input = last_input if input is None else input  # noqa: A001
        if expected_trajectory is not None and not isinstance(expected_trajectory, (list, tuple)):
            raise RunInputError(f"{self.id}: `expected_trajectory` must be a list of tool names or {{tool_name, args}} objects")
        for field, value in (("output", output), ("input", input)):
            _check_transcript(field, value)
        run = Run(
            run_id=run_id,
            output=output,
            input=input,
            ground_truth=ground_truth,
            output_text=self._within_limit("output", assistant_text(output)),
            input_text=self._within_limit("input", role_text(input, "user")) if input is not None else None,
            turns=turns,
            expected_trajectory=expected_trajectory,
        )
        given = {"output": output, "input": input, "ground_truth": ground_truth, "turns": turns, "expected_trajectory": expected_trajectory}
        for field, value in given.items():
            if field in self.plan.requires and value is None:
                raise NotScorable(f"{self.id} needs `{field}` for every run", parameter=field)
        run_context = context_strings(context, "context") if context is not None else None
        if "context" in self.plan.requires and get_context is None and self.get_context is None:
            # Without get_context the context is already known: a run that has none fails
            # here, before the judge is paid for steps that come ahead of the context's use.
            await self.contexts.resolve("", run, run_context)
        variables: dict[str, Any] = {
            "output": run.output_text,
            "input": run.input_text,
            "ground_truth": ground_truth if ground_truth is None or isinstance(ground_truth, str) else to_json(ground_truth),
            "options": self.options.model_dump(),
            "messages": plain(as_messages(output)),
            "tool_calls": extract_tool_calls(output),
            "tool_results": extract_tool_results(output),
            "turns": conversation_turns(turns) if turns is not None else None,
            "expected_trajectory": plain(list(expected_trajectory)) if expected_trajectory is not None else None,
            "metadata": plain(dict(metadata or {})),
        }
        done: dict[str, tuple[StepRecord, ContextList | None]] = {}

        async def run_step(step: AnyStepPlan) -> None:
            record, step_context = await self._run_step(step, run, run_context, get_context, variables, sample)
            done[step.id] = record, step_context
            if isinstance(step, ScoreStepPlan):
                variables["score"] = record.result["score"]
                variables["score_values"] = {name: value for name, value in record.result.items() if name != "score"}
            else:
                variables[step.id] = record.result

        for wave in self._waves:
            if len(wave) == 1:
                await run_step(wave[0])
            else:
                await _together([run_step(step) for step in wave])
        score: float | None = None
        reason: str | None = None
        used_context: ContextList | None = None
        records: dict[str, StepRecord] = {}
        for step in self.plan.steps:  # in the plan's order, whatever order they finished in
            record, step_context = done[step.id]
            records[step.id] = record
            used_context = step_context or used_context
            if isinstance(step, ScoreStepPlan):
                score = record.result["score"]
            if isinstance(step, ReasonStepPlan):
                reason = record.result
        assert score is not None  # a plan has exactly one score step
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

    async def _run_step(
        self,
        step: AnyStepPlan,
        run: Run,
        run_context: ContextList | None,
        get_context: GetContext | None,
        variables: dict[str, Any],
        sample: int = 0,
    ) -> tuple[StepRecord, ContextList | None]:
        """The step's record, and the context it was given (None when it read none)."""
        started = time.perf_counter()
        scope = dict(variables)
        # The context is resolved (get_context called) only for steps that use it, and only
        # once the step is known to run, unless its skip condition itself reads the context.
        if step.uses_context and step.skip_if is not None and "context" in step.skip_if.names:
            scope["context"] = await self.contexts.resolve(step.id, run, run_context, get_context)
        if step.skip_if is not None and self._evaluate(step.skip_if, scope):
            return StepRecord(id=step.id, kind=step.kind, skipped=True, result=self._skipped_result(step, scope)), scope.get("context")
        if step.uses_context and "context" not in scope:
            scope["context"] = await self.contexts.resolve(step.id, run, run_context, get_context)
        if "context" in scope:
            scope["context"] = self._context_within_limit(scope["context"])

        if isinstance(step, ScoreStepPlan):
            values = self._score(step, scope)
            return StepRecord(id=step.id, kind="score", result=values, duration_ms=(time.perf_counter() - started) * 1000), None
        if isinstance(step, ComputeStepPlan):
            computed = self._compute(step, scope)
            return StepRecord(id=step.id, kind="compute", result=computed, duration_ms=(time.perf_counter() - started) * 1000), scope.get("context")

        system_prompt = step.system.render(scope) if step.system is not None else None
        prompt = step.prompt.render(scope)
        messages = ([{"role": "system", "content": system_prompt}] if system_prompt else []) + [{"role": "user", "content": prompt}]
        with answer_scope(scope):
            answer = await self.judge.ask(JudgeRequest(messages=messages, sampling=step.sampling, step=step.id, response_model=step.answer_model, sample=sample))
        result: Any = _reason_text(answer.value) if isinstance(step, ReasonStepPlan) else plain(answer.value)
        record = StepRecord(
            id=step.id,
            kind=step.kind,
            system_prompt=system_prompt,
            prompt=prompt,
            result=result,
            thinking=answer.thinking,
            usage=answer.usage,
            cached=answer.cached,
            batch=answer.batch,
            duration_ms=(time.perf_counter() - started) * 1000,
        )
        return record, scope.get("context")

    def _within_limit(self, field: str, text: str) -> str:
        limit = self.plan.max_input_chars
        if len(text) <= limit:
            return text
        if self.plan.long_input == "refuse":
            raise RunInputError(
                f"{self.id}: the {field} is {len(text):,} characters, over max_input_chars ({limit:,}); raise `judge: "
                "max_input_chars:` (max_input_chars= in Python) or set `judge: long_input: truncate`"
            )
        logger.warning("%s: the %s is %s characters; only the first %s are judged (judge: max_input_chars)", self.id, field, f"{len(text):,}", f"{limit:,}")
        return text[:limit]

    def _context_within_limit(self, context: ContextList) -> ContextList:
        total = sum(len(piece) for piece in context)
        if total <= self.plan.max_input_chars:
            return context
        kept = self._within_limit("context", "\n".join(context))  # refuses, or warns and cuts
        pieces: ContextList = []
        for piece in context:  # whole pieces as far as they fit, then the start of the next
            room = len(kept) - sum(len(item) + 1 for item in pieces)
            if room <= 0:
                break
            pieces.append(piece[:room])
        return pieces

    def _skipped_result(self, step: AnyStepPlan, scope: Mapping[str, Any]) -> Any:
        if isinstance(step, ReasonStepPlan):
            assert step.on_skip is not None  # the spec requires on_skip with skip_if
            return step.on_skip.render(scope)
        if isinstance(step, ScoreStepPlan):
            assert step.on_skip is not None
            return {"score": float(step.on_skip)}
        assert isinstance(step, (JudgeStepPlan, ComputeStepPlan))
        return plain(step.on_skip)

    def _evaluate(self, expression: Evaluable, scope: Mapping[str, Any]) -> Any:
        try:
            return expression(scope)
        except ExpressionError as exc:
            raise ConfigError(f"{self.id}: {exc}") from None
        except NotScorable as exc:  # a function found the item lacks what it needs
            raise NotScorable(f"{self.id}: {exc.message}", parameter=exc.parameter) from None

    def _compute(self, step: ComputeStepPlan, scope: dict[str, Any]) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for name, compute in step.values.items():
            value = self._evaluate(compute, {**scope, **values})
            # Jinja's filters (select, map ...) give generators: a result is kept as a list.
            values[name] = plain(list(value) if isinstance(value, Iterator) else value)
        return values

    def _score(self, step: ScoreStepPlan, scope: dict[str, Any]) -> dict[str, float]:
        values: dict[str, float] = {}
        for name, compute in step.values.items():
            values[name] = self._evaluate(compute, {**scope, **values})
        score = self._evaluate(step.score, {**scope, **values})
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise ConfigError(f"{self.id}.{step.id}: score expression gave {score!r}, not a number")
        return {**values, "score": round(float(score), step.round) if step.round is not None else float(score)}


def _waves(plan: ScorerPlan) -> list[list[AnyStepPlan]]:
    """The plan's steps in waves: each step comes one wave after the latest step it reads,
    and the steps of a wave run at the same time."""
    level: dict[str, int] = {}
    waves: list[list[AnyStepPlan]] = []
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


def _check_transcript(field: str, value: Any) -> None:
    """Structured values must be chat messages: anything else would be judged as an empty
    text and get the best score of a scorer that finds nothing wrong in nothing."""
    if value is None or isinstance(value, str):
        return
    messages = [value] if isinstance(value, Mapping) else value if isinstance(value, (list, tuple)) else None
    if messages is None:
        raise RunInputError(f"the {field} must be text or chat messages, got {type(value).__name__}")
    bad = next((message for message in messages if not isinstance(message, Mapping) or not isinstance(message.get("role"), str)), None)
    if bad is not None or (isinstance(value, Mapping) and not messages):
        shown = json.dumps(bad, default=str)[:80] if bad is not None else "{}"
        raise RunInputError(
            f"the {field} is not a chat transcript (a list of messages with a `role`, e.g. "
            f'[{{"role": "assistant", "content": "..."}}]); found {shown}'
        )


def _reason_text(value: Any) -> str:
    """A reason is text: a `{reason}` answer is unwrapped, and so is a model that answered a
    free-text request with a JSON object holding a `reason`."""
    if isinstance(value, BaseModel):
        return str(getattr(value, "reason", ""))
    text = str(value).strip()
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            return text
        if isinstance(parsed, dict) and isinstance(parsed.get("reason"), str):
            return str(parsed["reason"])
    return text

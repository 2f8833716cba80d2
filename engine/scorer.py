"""Where a run happens and a score is computed: a Scorer runs the steps of one compiled
definition for one output and returns a ScoreResult.

The scorer knows kinds of steps (llm, score, reason), never particular scorers: what a step
asks, how its answer is checked and how the score is reduced all come from the definition.
"""

from __future__ import annotations

import inspect
import json
import math
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import ConfigError, RunInputError, ScorerError
from .expressions import ExpressionError, plain
from .judge import AsksJudge, TokenUsage
from .messages import as_messages, assistant_text, extract_tool_calls, role_text, tool_result_context
from .schemas import rule_failures, rule_scope
from .sync import run_sync

if TYPE_CHECKING:
    from .catalog import CompiledScorer, CompiledStep

ContextList = list[str]
#: `get_context(run=..., step=...)`, sync or async, returning the context strings.
GetContext = Callable[..., Union[ContextList, Awaitable[ContextList]]]


class Run(BaseModel):
    """The run being scored, as `get_context` receives it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    run_id: str
    output: Any = Field(description="As given: text or a list of chat messages")
    input: Any = None
    ground_truth: Any = None
    output_text: str = ""
    input_text: str | None = None


class StepRecord(BaseModel):
    """What one step did: the prompt it sent, the validated answer it got, what it cost."""

    id: str
    kind: str
    skipped: bool = False
    system_prompt: str | None = None
    prompt: str | None = None
    result: Any = None
    usage: TokenUsage | None = None
    duration_ms: float = 0.0


class ScoreResult(BaseModel):
    """The outcome of one run. Besides the fields, `<step>_step_result` and `<step>_prompt`
    read the result and prompt of any step (e.g. `preprocess_step_result`, `analyze_prompt`,
    `generate_reason_prompt`)."""

    run_id: str
    scorer_id: str
    scorer_hash: str = Field(description="Fingerprint of the definition, templates and schemas")
    model: str
    score: float
    reason: str | None = None
    steps: dict[str, StepRecord]
    duration_ms: float = 0.0

    @property
    def usage(self) -> TokenUsage:
        """Tokens of every judge call of the run, re-asks included."""
        total = TokenUsage()
        for record in self.steps.values():
            if record.usage is not None:
                total = total + record.usage
        return total

    def __getattr__(self, name: str) -> Any:
        steps = self.__dict__.get("steps") or {}
        for suffix, attribute in (("_step_result", "result"), ("_prompt", "prompt")):
            step_id = name.removesuffix(suffix)
            if name.endswith(suffix) and step_id in steps:
                return getattr(steps[step_id], attribute)
        return super().__getattr__(name)  # type: ignore[misc]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the contract's flat fields, then token usage per step."""
        flat: dict[str, Any] = {"run_id": self.run_id, "scorer_id": self.scorer_id, "scorer_hash": self.scorer_hash, "model": self.model}
        for record in self.steps.values():
            if record.kind == "llm":
                flat[f"{record.id}_step_result"] = record.result
            if record.kind in ("llm", "reason"):
                flat[f"{record.id}_prompt"] = record.prompt
        flat["score"] = self.score
        flat["reason"] = self.reason
        usage = {record.id: record.usage.model_dump() for record in self.steps.values() if record.usage is not None}
        flat["usage"] = {**usage, "total": self.usage.model_dump()}
        flat["skipped_steps"] = [record.id for record in self.steps.values() if record.skipped]
        flat["duration_ms"] = round(self.duration_ms, 1)
        return flat


def context_strings(value: Any, where: str) -> ContextList:
    """Context pieces as strings: structured pieces (tool results, records) become their JSON."""
    if not isinstance(value, (list, tuple)):
        raise RunInputError(f"{where} must be a list of strings, got {type(value).__name__}")
    return [item if isinstance(item, str) else json.dumps(plain(item), ensure_ascii=False, default=str) for item in value]


class Scorer:
    """A scorer created from a catalog definition, a judge and options."""

    def __init__(self, compiled: CompiledScorer, judge: AsksJudge, options: dict[str, Any]) -> None:
        self.compiled = compiled
        self.judge = judge
        self.get_context: GetContext | None = options.pop("get_context", None)
        if self.get_context is not None and not callable(self.get_context):
            raise ConfigError(f"{self.id}: option get_context must be a callable (run, step) -> list[str]")
        static = options.pop("context", None)
        self.context: ContextList | None = context_strings(static, f"{self.id}: option context") if static is not None else None
        try:
            self.options = compiled.options_model.model_validate(options)
        except ValidationError as exc:
            first = exc.errors()[0]
            name = ".".join(map(str, first["loc"]))
            known = ", ".join(["context", "get_context", *compiled.options_model.model_fields])
            detail = f"unknown option (known: {known})" if first["type"] == "extra_forbidden" else first["msg"]
            raise ConfigError(f"{self.id}: option {name}: {detail} (got {first.get('input')!r})") from None
        failures = rule_failures(compiled.option_rules, {"options": self.options.model_dump()})
        if failures:
            raise ConfigError(f"{self.id}: options: {'; '.join(failures)}")

    @property
    def id(self) -> str:
        return self.compiled.id

    @property
    def definition(self) -> Any:
        return self.compiled.definition

    def __repr__(self) -> str:
        return f"Scorer({self.id!r}, model={self.judge.model!r})"

    def run(
        self,
        output: Any = None,
        input: Any = None,  # noqa: A002 - the name users know from the run's fields
        ground_truth: Any = None,
        run_id: str | None = None,
        context: list[str] | None = None,
    ) -> ScoreResult:
        """Score one output (sync wrapper of `arun`)."""
        return run_sync(self.arun(output, input=input, ground_truth=ground_truth, run_id=run_id, context=context))

    async def arun(
        self,
        output: Any = None,
        input: Any = None,  # noqa: A002
        ground_truth: Any = None,
        run_id: str | None = None,
        context: list[str] | None = None,
    ) -> ScoreResult:
        """Score one output. `output` is text or chat messages; `context` (for this run only)
        is used when there is no `get_context`, before the scorer's static context."""
        started = time.perf_counter()
        run = Run(
            run_id=run_id or str(uuid.uuid4()),
            output=output,
            input=input,
            ground_truth=ground_truth,
            output_text=assistant_text(output),
            input_text=role_text(input, "user") if input is not None else None,
        )
        for field, value in (("output", output), ("input", input), ("ground_truth", ground_truth)):
            if field in self.definition.requires and value is None:
                raise RunInputError(f"{self.id} needs `{field}` for every run")
        run_context = context_strings(context, "context") if context is not None else None
        if "context" in self.definition.requires and self.get_context is None:
            # Without get_context the context is already known: a run that has none fails
            # here, before the judge is paid for steps that come ahead of the context's use.
            await self._context("", run, run_context)
        variables: dict[str, Any] = {
            "output": run.output_text,
            "input": run.input_text,
            "ground_truth": ground_truth if ground_truth is None or isinstance(ground_truth, str) else json.dumps(plain(ground_truth), ensure_ascii=False),
            "options": self.options.model_dump(),
            "messages": plain(as_messages(output)),
            "tool_calls": extract_tool_calls(output),
        }
        records: dict[str, StepRecord] = {}
        score: float | None = None
        reason: str | None = None
        for step in self.compiled.steps:
            record = await self._run_step(step, run, run_context, variables)
            records[step.id] = record
            if step.kind == "score":
                score = record.result["score"]
                variables["score"] = score
                variables["score_values"] = {name: value for name, value in record.result.items() if name != "score"}
            else:
                variables[step.id] = record.result
            if step.kind == "reason":
                reason = record.result
        assert score is not None  # the definition has exactly one score step
        return ScoreResult(
            run_id=run.run_id,
            scorer_id=self.id,
            scorer_hash=self.compiled.fingerprint,
            model=self.judge.model,
            score=score,
            reason=reason,
            steps=records,
            duration_ms=(time.perf_counter() - started) * 1000,
        )

    async def _run_step(self, step: CompiledStep, run: Run, run_context: ContextList | None, variables: dict[str, Any]) -> StepRecord:
        started = time.perf_counter()
        scope = dict(variables)
        # The context is resolved (get_context called) only for steps that use it, and only
        # once the step is known to run, unless its skip condition itself reads the context.
        if step.uses_context and step.skip_if is not None and "context" in step.skip_if.names:
            scope["context"] = await self._context(step.id, run, run_context)
        if step.skip_if is not None and self._evaluate(step.skip_if, scope):
            return StepRecord(id=step.id, kind=step.kind, skipped=True, result=self._skipped_result(step, scope))
        if step.uses_context and "context" not in scope:
            scope["context"] = await self._context(step.id, run, run_context)

        if step.kind == "score":
            values = self._score(step, scope)
            return StepRecord(id=step.id, kind="score", result=values, duration_ms=(time.perf_counter() - started) * 1000)

        assert step.prompt is not None
        templates = self.compiled.templates
        system_prompt = templates.render(step.system, scope) if step.system is not None else None
        prompt = templates.render(step.prompt, scope)
        messages = ([{"role": "system", "content": system_prompt}] if system_prompt else []) + [{"role": "user", "content": prompt}]
        with rule_scope(scope):
            answer = await self.judge.ask(messages, step.sampling, step.id, step.answer_model)
        if step.kind == "reason":
            result: Any = _reason_text(answer.value)
        else:
            result = plain(answer.value)
        return StepRecord(
            id=step.id,
            kind=step.kind,
            system_prompt=system_prompt,
            prompt=prompt,
            result=result,
            usage=answer.usage,
            duration_ms=(time.perf_counter() - started) * 1000,
        )

    def _skipped_result(self, step: CompiledStep, scope: Mapping[str, Any]) -> Any:
        on_skip = step.definition.on_skip
        if step.kind == "reason":
            assert step.skip_reason is not None
            return self.compiled.templates.render(step.skip_reason, scope)
        if step.kind == "score":
            return {"score": float(on_skip)}  # type: ignore[arg-type]
        return plain(on_skip)

    async def _context(self, step_id: str, run: Run, run_context: ContextList | None) -> ContextList:
        if self.get_context is not None:
            try:
                value = self.get_context(run=run, step=step_id)
                if inspect.isawaitable(value):
                    value = await value
            except ScorerError:
                raise
            except Exception as exc:
                raise RunInputError(f"get_context failed in step {step_id!r}: {type(exc).__name__}: {exc}") from exc
            return context_strings(value, "get_context's result")
        if run_context is not None:
            return run_context
        if self.context is not None:
            return self.context
        if self.definition.context_from_tool_results:
            from_tools = tool_result_context(run.output)
            if from_tools:
                return from_tools
        if "context" in self.definition.requires:
            raise RunInputError(
                f"{self.id} needs a context: pass options={{'context': [...]}} or a get_context callable "
                "when creating the scorer, or context=[...] to run()"
            )
        return []

    def _evaluate(self, expression: Any, scope: Mapping[str, Any]) -> Any:
        try:
            return expression(scope)
        except ExpressionError as exc:
            raise ConfigError(f"{self.id}: {exc}") from None

    def _score(self, step: CompiledStep, scope: dict[str, Any]) -> dict[str, float]:
        values: dict[str, float] = {}
        for name, compute in step.values.items():
            values[name] = self._evaluate(compute, {**scope, **values})
        assert step.score is not None
        score = self._evaluate(step.score, {**scope, **values})
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise ConfigError(f"{self.id}.{step.id}: score expression gave {score!r}, not a number")
        rounding = step.definition.round  # type: ignore[union-attr]
        return {**values, "score": round(float(score), rounding) if rounding is not None else float(score)}


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

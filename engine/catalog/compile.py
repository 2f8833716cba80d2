"""Where a definition becomes a plan: templates parsed, schemas turned into answer models,
expressions and rules compiled, once, at load time, so that a broken file fails with its
FILE:LINE and a run only does the work of the run."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError
from ..judge import Sampling
from ..scoring.plan import (
    AnyStepPlan,
    ComputeStepPlan,
    Evaluable,
    JudgeStepPlan,
    JuryPlan,
    ReasonStepPlan,
    ScorerPlan,
    ScoreStepPlan,
)
from .answers import (
    SchemaCompiler,
    compile_rules,
    compile_schema,
    rule_failures,
    with_rules,
)
from .expressions import Expression, Reducer
from .source import CatalogSource, load_yaml, locate, validation_error
from .spec import (
    RUN_VARIABLES,
    SCORE_VARIABLES,
    ComputeStep,
    LLMStep,
    ReasonStep,
    ReducerSpec,
    ScorerDefinition,
    ScoreStep,
)
from .templates import CompiledPrompt, PromptTemplates


class ScorerCompiler:
    """Compiles the definitions of one catalog source against its template and schema folders."""

    def __init__(self, source: CatalogSource) -> None:
        self.source = source
        self.templates = PromptTemplates(source.templates_path)

    def schema_file(self, name: str, where: tuple[str | None, int | None]) -> Path:
        for folder in self.source.schemas_path:
            if (folder / name).is_file():
                return folder / name
        folders = ", ".join(str(folder) for folder in self.source.schemas_path)
        raise ConfigError(f"schema {name!r} not found in {folders}", where[0] or self.source.path, where[1])

    def compile(self, definition: ScorerDefinition, raw: Any) -> ScorerPlan:
        options_path, _ = locate(raw, ["options"])
        options_model = SchemaCompiler(raw, Path(options_path or self.source.path)).properties_model(
            raw.get("options") or {}, f"{_title(definition.id)}Options", ["options"]
        )
        try:
            defaults = options_model()
        except ValidationError as exc:
            first = exc.errors()[0]
            path, line = locate(raw, ["options", *first["loc"]])
            raise ConfigError(
                f"options.{'.'.join(map(str, first['loc']))}: default: {first['msg']}", path or self.source.path, line
            ) from None
        shadowed = sorted(set(options_model.model_fields) & set(dir(dict)))
        if shadowed:
            # In expressions `options.values` is the mapping's method, never the option.
            path, line = locate(raw, ["options", shadowed[0]])
            raise ConfigError(f"options.{shadowed[0]}: the name is taken by mappings (`options.{shadowed[0]}` would not reach it); choose another", path or self.source.path, line)
        rules_path, rules_line = locate(raw, ["option_rules"])
        try:
            option_rules = compile_rules(definition.option_rules, f"scorers.{definition.id}.option_rules")
        except ConfigError as exc:
            raise ConfigError(exc.message, rules_path or self.source.path, rules_line) from None
        failures = [] if definition.abstract else rule_failures(option_rules, {"options": defaults.model_dump()})
        if failures:
            # A concrete scorer must be usable as written: fail now, at the scorer's name in this file.
            path, line = locate(self.source.scorers, [definition.id])
            raise ConfigError(f"scorers.{definition.id}: options: {'; '.join(failures)}", path or self.source.path, line)
        hashed: dict[str, str] = {"definition": json.dumps(definition.model_dump(mode="json", by_alias=True), sort_keys=True)}
        known = [*RUN_VARIABLES]
        steps: list[AnyStepPlan] = []
        for index, step in enumerate(definition.steps):
            steps.append(_StepCompiler(self, definition, step, ["steps", index], raw).compile(known, hashed))
            known.extend(SCORE_VARIABLES if isinstance(step, ScoreStep) else step.produces() if isinstance(step, ComputeStep) else [step.id])
        return ScorerPlan(
            id=definition.id,
            name=definition.name,
            description=definition.description,
            direction=definition.direction,
            requires=tuple(definition.requires),
            steps=tuple(steps),
            options_model=options_model,
            option_rules=tuple(option_rules),
            default_model=definition.judge.model,
            jury=JuryPlan(
                models=tuple(definition.judges.models), aggregate=definition.judges.aggregate,
                threshold=definition.judges.threshold, margin=definition.judges.margin,
            ) if definition.judges is not None else None,  # fmt: skip
            context_from_tool_results=definition.context_from_tool_results,
            fingerprint=hashlib.sha256(json.dumps(hashed, sort_keys=True).encode()).hexdigest()[:16],
        )

    def template(self, name: str, variables: list[str], label: str, hashed: dict[str, str]) -> CompiledPrompt:
        template = self.templates.load(name, variables, label)
        for referenced in self.templates.referenced(name):
            hashed[f"template:{referenced}"] = self.templates.path_of(referenced).read_text(encoding="utf-8")
        return template


class _StepCompiler:
    """One step of one definition; errors without a place of their own get the step's."""

    def __init__(
        self, scorer: ScorerCompiler, definition: ScorerDefinition, step: LLMStep | ReasonStep | ScoreStep | ComputeStep, loc: list[Any], raw: Any
    ) -> None:
        self.scorer = scorer
        self.definition = definition
        self.step = step
        self.loc = loc
        self.raw = raw
        self.label = f"{definition.id}.{step.id}"

    def located(self, field: str, build: Callable[[], Any]) -> Any:
        """Runs `build`; a ConfigError without a place gets the place of `field`."""
        try:
            return build()
        except ConfigError as exc:
            if exc.path is not None:
                raise
            path, line = locate(self.raw, [*self.loc, field])
            raise ConfigError(exc.message, path or self.scorer.source.path, line) from None

    def compile(self, known: list[str], hashed: dict[str, str]) -> AnyStepPlan:
        step, label = self.step, self.label
        skip_source = step.skip_if
        skip_if = self.located("skip_if", lambda: Expression(skip_source, f"{label}.skip_if")) if skip_source else None
        if isinstance(step, ScoreStep):
            return self.score_step(step, skip_if)
        if isinstance(step, ComputeStep):
            return self.compute_step(step, skip_if)
        sampling_fields = set(Sampling.model_fields)
        judge = self.definition.judge
        sampling = Sampling.model_validate(judge.model_dump(include=sampling_fields, exclude_unset=True))
        if step.judge is not None:
            sampling = sampling.merged(Sampling.model_validate(step.judge.model_dump(include=sampling_fields, exclude_unset=True)))
        variables = [name for name in known if name != "context" or step.uses_context]
        system_name = (step.judge.system if step.judge else None) or judge.system
        system = self.scorer.template(system_name, variables, label, hashed) if system_name else None
        prompt = self.scorer.template(step.prompt, variables, label, hashed)
        answer_model = self.answer_model(hashed)
        if isinstance(step, ReasonStep):
            reason_source = step.on_skip
            skip_reason = (
                self.located("on_skip", lambda: self.scorer.templates.from_string(reason_source, f"{label}.on_skip"))
                if reason_source is not None
                else None
            )
            return ReasonStepPlan(
                id=step.id, skip_if=skip_if, uses_context=step.uses_context, prompt=prompt, system=system,
                answer_model=answer_model, sampling=sampling, on_skip=skip_reason,
            )  # fmt: skip
        assert answer_model is not None  # an llm step's schema is required by the spec
        return JudgeStepPlan(
            id=step.id, skip_if=skip_if, uses_context=step.uses_context, prompt=prompt, system=system,
            answer_model=answer_model, sampling=sampling, on_skip=step.on_skip,
        )  # fmt: skip

    def score_step(self, step: ScoreStep, skip_if: Evaluable | None) -> ScoreStepPlan:
        values: dict[str, Evaluable] = {}
        for name, value in step.values.items():
            where = f"{self.label}.values.{name}"
            values[name] = self.located("values", lambda: Reducer(value, where) if isinstance(value, ReducerSpec) else Expression(value, where))
        score_source = step.score
        score = self.located("score", lambda: Expression(score_source, f"{self.label}.score"))
        return ScoreStepPlan(id=step.id, skip_if=skip_if, values=values, score=score, round=step.round, on_skip=step.on_skip)

    def compute_step(self, step: ComputeStep, skip_if: Evaluable | None) -> ComputeStepPlan:
        values: dict[str, Evaluable] = {}
        for name, source in step.values.items():
            where = f"{self.label}.values.{name}"
            values[name] = self.located("values", lambda: Expression(source, where))
        return ComputeStepPlan(id=step.id, skip_if=skip_if, values=values, on_skip=step.on_skip)

    def answer_model(self, hashed: dict[str, str]) -> type[BaseModel] | None:
        step, label = self.step, self.label
        assert not isinstance(step, (ScoreStep, ComputeStep))
        if step.answer_schema is None:
            return None
        schema_path = self.scorer.schema_file(step.answer_schema, locate(self.raw, [*self.loc, "schema"]))
        hashed[f"schema:{step.answer_schema}"] = schema_path.read_text(encoding="utf-8")
        model, rules = compile_schema(load_yaml(schema_path), schema_path)
        if isinstance(step, LLMStep):
            step_rules = step.rules
            rules = [*rules, *self.located("rules", lambda: compile_rules(step_rules, f"{label} rule"))]
        answer_model = with_rules(model, rules)
        if isinstance(step, ReasonStep) and model.model_fields.get("reason") is None:
            raise ConfigError(f"{label}: a reason schema needs a `reason` string property", schema_path)
        if isinstance(step, LLMStep) and step.on_skip is not None:
            try:
                answer_model.model_validate(step.on_skip)
            except ValidationError as exc:
                path, line = locate(self.raw, [*self.loc, "on_skip"])
                raise ConfigError(f"{label}.on_skip does not fit {step.answer_schema}: {exc.errors()[0]['msg']}", path, line) from None
        return answer_model


def _title(identifier: str) -> str:
    return "".join(part.capitalize() for part in identifier.replace("-", "_").split("_"))


def compile_catalog(source: CatalogSource) -> dict[str, tuple[ScorerDefinition, ScorerPlan]]:
    """Every scorer the source offers, validated and compiled, by id."""
    compiler = ScorerCompiler(source)
    compiled: dict[str, tuple[ScorerDefinition, ScorerPlan]] = {}
    for scorer_id, raw in source.resolved().items():
        try:
            definition = ScorerDefinition.model_validate({**raw, "id": scorer_id})
        except ValidationError as exc:
            raise validation_error(exc, raw, f"scorers.{scorer_id}", source.path) from None
        compiled[scorer_id] = (definition, compiler.compile(definition, raw))
    return compiled


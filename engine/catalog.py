"""Where YAML becomes a scorer: catalog files are read, validated into typed definitions,
`extends:` is resolved, and each definition is compiled (templates parsed, schemas turned
into models, expressions compiled) once, so that a broken file fails at load time with its
FILE:LINE and a run only does the work of the run.

No model is called and nothing is stored here: a catalog can be checked offline.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from jinja2 import Template
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .errors import ConfigError
from .expressions import Expression, Reducer
from .judge import Judge, JudgeConfig, Sampling, StructuredMode
from .schemas import CompiledRule, Rule, SchemaCompiler, compile_rules, compile_schema, rule_failures, with_rules
from .scorer import Scorer
from .templates import PromptTemplates
from .yaml_source import LocatedDict, LocatedList, load_yaml, locate

RunField = Literal["output", "input", "context", "ground_truth"]

#: Variables every template and expression of a run can use, beside earlier steps' ids.
RUN_VARIABLES = ("output", "input", "context", "ground_truth", "options", "messages", "tool_calls")
#: Set by the score step for the steps after it.
SCORE_VARIABLES = ("score", "score_values")
_RESERVED = {*RUN_VARIABLES, *SCORE_VARIABLES, "item", "rank"}

_PACKAGED_CATALOG = Path(__file__).parent / "_catalog"
_SOURCE_CATALOG = Path(__file__).parent.parent


def builtin_catalog_path() -> Path:
    """The built-in `scorers.yaml`: inside the installed package, or at the top of a checkout."""
    packaged = _PACKAGED_CATALOG / "scorers.yaml"
    return packaged if packaged.is_file() else _SOURCE_CATALOG / "scorers.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class StepJudge(Sampling):
    """Per-step changes to the scorer's judge settings."""

    system: str | None = Field(default=None, description="Template of the system message")


class JudgeSpec(StepJudge):
    """The scorer's judge: default model, sampling, system instructions."""

    model: str | None = Field(default=None, description="Default 'provider/model'")


class _StepBase(_Strict):
    id: str
    skip_if: str | None = Field(default=None, description="Expression; when true the step is not run")

    @field_validator("id")
    @classmethod
    def _plain_id(cls, value: str) -> str:
        if not value.isidentifier():
            raise ValueError(f"step id {value!r} must be an identifier (letters, digits, _)")
        return value


class LLMStep(_StepBase):
    """Asks the judge with a rendered template; the answer must pass the schema."""

    kind: Literal["llm"]
    prompt: str = Field(description="Template under the prompts folder")
    answer_schema: str = Field(alias="schema", description="Schema file under the schemas folder")
    uses_context: bool = False
    judge: StepJudge | None = None
    rules: list[Rule] = Field(default_factory=list)
    on_skip: dict[str, Any] | None = Field(default=None, description="The step's result when skipped")


class ReasonStep(_StepBase):
    """Asks the judge to explain the score; the result is text."""

    kind: Literal["reason"]
    prompt: str
    answer_schema: str | None = Field(default=None, alias="schema", description="Must have a `reason` string")
    uses_context: bool = False
    judge: StepJudge | None = None
    on_skip: str | None = Field(default=None, description="Template of the reason when skipped")


class ScoreStep(_StepBase):
    """Computes the score from earlier steps, without a model."""

    kind: Literal["score"]
    values: dict[str, Union[Reducer, str]] = Field(default_factory=dict, description="Named values, in order")
    score: str = Field(description="Expression of the final score")
    round: int | None = Field(default=2, ge=0)
    on_skip: float | None = None


Step = Annotated[Union[LLMStep, ReasonStep, ScoreStep], Field(discriminator="kind")]


class ScorerDefinition(_Strict):
    """One scorer, as written in a catalog."""

    id: str
    name: str
    description: str
    direction: Literal["higher_is_better", "lower_is_better"]
    requires: list[RunField] = Field(default=["output"])
    options: dict[str, Any] = Field(default_factory=dict, description="Option name: JSON Schema with default")
    judge: JudgeSpec = Field(default_factory=JudgeSpec)
    context_from_tool_results: bool = Field(
        default=False, description="With no context given, use the tool results found in the output messages"
    )
    option_rules: list[Rule] = Field(
        default_factory=list,
        description="Checks over `options` that no single option's schema can say (e.g. 'one of two is set'); "
        "checked against the defaults at load time and against the given options when a scorer is created",
    )
    abstract: bool = Field(
        default=False,
        description="A base whose options are completed later (by a scorer that `extends` it, or at creation): "
        "its option rules are not checked against its defaults at load time. Not inherited",
    )
    steps: list[Step]

    @model_validator(mode="after")
    def _check_steps(self) -> ScorerDefinition:
        ids = [step.id for step in self.steps]
        duplicates = sorted({step_id for step_id in ids if ids.count(step_id) > 1})
        if duplicates:
            raise ValueError(f"step ids must be unique: {', '.join(duplicates)}")
        kinds = [step.kind for step in self.steps]
        if kinds.count("score") != 1:
            raise ValueError("a scorer needs exactly one step of kind 'score'")
        if kinds.count("reason") > 1 or ("reason" in kinds and kinds.index("reason") < kinds.index("score")):
            raise ValueError("a scorer has at most one 'reason' step, after the 'score' step")
        for step in self.steps:
            # The results of llm and reason steps become variables named by their id.
            if step.kind != "score" and step.id in _RESERVED:
                raise ValueError(f"step id {step.id!r} is a variable name already; avoid {sorted(_RESERVED)}")
            if step.skip_if is not None and step.on_skip is None:
                raise ValueError(f"step {step.id!r} has skip_if but no on_skip (what the step gives when skipped)")
        return self


class CompiledStep:
    """A step ready to run: templates parsed, expressions compiled, answer model built."""

    def __init__(
        self,
        definition: LLMStep | ReasonStep | ScoreStep,
        sampling: Sampling,
        system: Template | None,
        prompt: Template | None,
        answer_model: type[BaseModel] | None,
        skip_if: Expression | None,
        skip_reason: Template | None,
        values: dict[str, Callable[[Mapping[str, Any]], Any]],
        score: Expression | None,
    ) -> None:
        self.definition = definition
        self.sampling = sampling
        self.system = system
        self.prompt = prompt
        self.answer_model = answer_model
        self.skip_if = skip_if
        self.skip_reason = skip_reason
        self.values = values
        self.score = score

    @property
    def id(self) -> str:
        return self.definition.id

    @property
    def kind(self) -> str:
        return self.definition.kind

    @property
    def uses_context(self) -> bool:
        return bool(getattr(self.definition, "uses_context", False))


class CompiledScorer:
    """A definition with everything a run needs; shared by every scorer created from it."""

    def __init__(
        self,
        definition: ScorerDefinition,
        steps: list[CompiledStep],
        options_model: type[BaseModel],
        templates: PromptTemplates,
        fingerprint: str,
        option_rules: list[CompiledRule] | None = None,
    ) -> None:
        self.definition = definition
        self.steps = steps
        self.options_model = options_model
        self.templates = templates
        self.fingerprint = fingerprint
        self.option_rules = option_rules or []

    @property
    def id(self) -> str:
        return self.definition.id


class Catalog:
    """The scorers of one catalog file. A host catalog also holds the built-in scorers it
    does not redefine, compiled against its own prompt and schema folders first, so its
    templates shadow the built-in ones everywhere."""

    def __init__(
        self,
        path: Path,
        compiled: dict[str, CompiledScorer],
        raw_definitions: dict[str, Any],
        templates_path: list[Path],
        schemas_path: list[Path],
    ) -> None:
        self.path = path
        self._compiled = compiled
        # Kept so that a host catalog can `extends:` any of them.
        self.raw_definitions = raw_definitions
        self.templates_path = templates_path
        self.schemas_path = schemas_path

    def ids(self) -> list[str]:
        return list(self._compiled)

    def compiled(self, scorer_id: str) -> CompiledScorer:
        if scorer_id not in self._compiled:
            raise ConfigError(f"unknown scorer {scorer_id!r}; known scorers: {', '.join(self._compiled)}")
        return self._compiled[scorer_id]

    def definition(self, scorer_id: str) -> ScorerDefinition:
        return self.compiled(scorer_id).definition

    def __contains__(self, scorer_id: object) -> bool:
        return scorer_id in self._compiled

    def create(
        self,
        scorer_id: str,
        model: str | JudgeConfig | None = None,
        options: Mapping[str, Any] | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        mode: StructuredMode | None = None,
    ) -> Scorer:
        """A runnable scorer. `model` is 'provider/model' (or a full JudgeConfig); without it,
        the SCORERS_MODEL environment variable, then the scorer's default model are used.
        `mode` (or SCORERS_MODE) picks how structured answers are requested."""
        compiled = self.compiled(scorer_id)
        config = _judge_config(compiled.definition, model, base_url, api_key, mode)
        scorer = Scorer(compiled, Judge(config), dict(options or {}))
        config.endpoint()  # a missing key fails now rather than mid-run, once the options are known good
        return scorer


def _judge_config(
    definition: ScorerDefinition,
    model: str | JudgeConfig | None,
    base_url: str | None,
    api_key: str | None,
    mode: StructuredMode | None,
) -> JudgeConfig:
    if isinstance(model, JudgeConfig):
        base = model
    else:
        chosen = model or os.environ.get("SCORERS_MODEL") or definition.judge.model
        if not chosen:
            raise ConfigError(f"{definition.id}: no judge model; pass model='provider/model' or set SCORERS_MODEL")
        base = JudgeConfig(model=chosen)
    updates = {"base_url": base_url, "api_key": api_key, "mode": mode or os.environ.get("SCORERS_MODE")}
    try:
        config = JudgeConfig.model_validate({**dict(base), **{name: value for name, value in updates.items() if value}})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(f"judge {'.'.join(map(str, first['loc']))}: {first['msg']}") from None
    return config


# --- loading -----------------------------------------------------------------------------


class _CatalogFile(_Strict):
    """The top of a catalog file: where its prompts and schemas are, and its scorers."""

    prompts: str = "prompts"
    schemas: str = "schemas"
    scorers: dict[str, dict[str, Any]]


def _validation_error(exc: ValidationError, data: Any, label: str, fallback_path: Path) -> ConfigError:
    # A misspelt key shows up both as an unknown key and as a missing one; the unknown one
    # points at the line to fix.
    first = next((error for error in exc.errors() if error["type"] == "extra_forbidden"), exc.errors()[0])
    # Drop the discriminator tags pydantic adds to the location of a tagged union.
    loc = [part for part in first["loc"] if part not in ("llm", "reason", "score") or not isinstance(part, str)]
    path, line = locate(data, loc)
    field = ".".join(str(part) for part in [label, *loc] if part != "")
    return ConfigError(f"{field}: {first['msg']}", path or fallback_path, line)


def _merge(base: Any, override: Any, at_steps: bool = False) -> Any:
    """`extends`: mappings merge key by key; `steps` merge by step id; anything else replaces."""
    if isinstance(base, LocatedDict) and isinstance(override, LocatedDict):
        merged = LocatedDict({**base, **override})
        merged.place = override.place
        merged.key_places = {**base.key_places, **override.key_places}
        for key in base.keys() & override.keys():
            merged[key] = _merge(base[key], override[key], at_steps=key == "steps" and not at_steps)
        return merged
    if at_steps and isinstance(base, LocatedList) and isinstance(override, LocatedList):
        steps = LocatedList(base)
        steps.place = override.place
        steps.item_places = list(base.item_places)
        positions = {step.get("id"): index for index, step in enumerate(base) if isinstance(step, Mapping)}
        for index, step in enumerate(override):
            step_id = step.get("id") if isinstance(step, Mapping) else None
            if step_id not in positions:
                path, line = locate(override, [index])
                raise ConfigError(
                    f"extends: {step_id!r} is not a step of the base scorer ({', '.join(map(str, positions))}); "
                    "an overriding step names the step it changes by its id",
                    path,
                    line,
                )
            steps[positions[step_id]] = _merge(base[positions[step_id]], step)
            steps.item_places[positions[step_id]] = override.item_places[index]
        return steps
    return override


class _Loader:
    """Reads one catalog file and compiles its scorers."""

    def __init__(self, path: Path, fallback: Catalog | None) -> None:
        self.path = path.resolve()
        self.fallback = fallback
        data = load_yaml(self.path)
        if not isinstance(data, Mapping):
            raise ConfigError("a catalog must be a mapping with a `scorers:` key", self.path, locate(data, [])[1])
        try:
            self.file = _CatalogFile.model_validate(data)
        except ValidationError as exc:
            raise _validation_error(exc, data, "", self.path) from None
        self.scorers: Mapping[str, Any] = data["scorers"]
        folder = self.path.parent
        self.templates_path = [folder / self.file.prompts, *(fallback.templates_path if fallback else [])]
        self.schemas_path = [folder / self.file.schemas, *(fallback.schemas_path if fallback else [])]
        self.templates = PromptTemplates(self.templates_path)

    def raw_definition(self, scorer_id: str, seen: tuple[str, ...] = ()) -> Any:
        """The scorer's mapping with `extends` applied. A base is a scorer of this file or,
        failing that (or when a scorer extends the built-in of its own id), a built-in."""
        if scorer_id in seen:
            raise ConfigError(f"extends: cycle {' -> '.join([*seen, scorer_id])}", self.path)
        inherited = self.fallback.raw_definitions if self.fallback else {}
        raw = self.scorers.get(scorer_id)
        if raw is None:
            if scorer_id in inherited:
                return inherited[scorer_id]
            known = ", ".join([*self.scorers, *inherited])
            raise ConfigError(f"extends: unknown scorer {scorer_id!r}; known: {known}", self.path)
        if not isinstance(raw, Mapping):
            path, line = locate(self.scorers, [scorer_id])
            raise ConfigError(f"scorers.{scorer_id}: must be a mapping", path, line)
        base_id = raw.get("extends")
        if base_id is None:
            return raw
        if base_id == scorer_id and scorer_id not in inherited:
            raise ConfigError(f"scorers.{scorer_id}: extends itself", *locate(self.scorers, [scorer_id]))
        base = inherited[base_id] if base_id == scorer_id else self.raw_definition(str(base_id), (*seen, scorer_id))
        merged = _merge(base, raw)
        del merged["extends"]
        if "abstract" not in raw:  # a scorer built on an abstract base is concrete unless it says otherwise
            merged.pop("abstract", None)
        return merged

    def load(self) -> Catalog:
        inherited = self.fallback.raw_definitions if self.fallback else {}
        raw_definitions: dict[str, Any] = {}
        for scorer_id in self.scorers:
            raw_definitions[scorer_id] = self.raw_definition(scorer_id)
        raw_definitions.update({scorer_id: raw for scorer_id, raw in inherited.items() if scorer_id not in raw_definitions})
        compiled: dict[str, CompiledScorer] = {}
        for scorer_id, raw in raw_definitions.items():
            try:
                definition = ScorerDefinition.model_validate({**raw, "id": scorer_id})
            except ValidationError as exc:
                raise _validation_error(exc, raw, f"scorers.{scorer_id}", self.path) from None
            compiled[scorer_id] = self.compile(definition, raw)
        return Catalog(self.path, compiled, raw_definitions, self.templates_path, self.schemas_path)

    # --- compiling one definition -------------------------------------------------------

    def schema_file(self, name: str, where: tuple[str | None, int | None]) -> Path:
        for folder in self.schemas_path:
            if (folder / name).is_file():
                return folder / name
        folders = ", ".join(str(folder) for folder in self.schemas_path)
        raise ConfigError(f"schema {name!r} not found in {folders}", where[0] or self.path, where[1])

    def compile(self, definition: ScorerDefinition, raw: Any) -> CompiledScorer:
        options_path, _ = locate(raw, ["options"])
        options_model = SchemaCompiler(raw, Path(options_path or self.path)).properties_model(
            raw.get("options") or {}, f"{_title(definition.id)}Options", ["options"]
        )
        try:
            defaults = options_model()
        except ValidationError as exc:
            first = exc.errors()[0]
            path, line = locate(raw, ["options", *first["loc"]])
            raise ConfigError(f"options.{'.'.join(map(str, first['loc']))}: default: {first['msg']}", path or self.path, line) from None
        rules_path, rules_line = locate(raw, ["option_rules"])
        try:
            option_rules = compile_rules(definition.option_rules, f"scorers.{definition.id}.option_rules")
        except ConfigError as exc:
            raise ConfigError(exc.message, rules_path or self.path, rules_line) from None
        failures = [] if definition.abstract else rule_failures(option_rules, {"options": defaults.model_dump()})
        if failures:
            # A concrete scorer must be usable as written: fail now, at the scorer's name in this file.
            path, line = locate(self.scorers, [definition.id])
            raise ConfigError(f"scorers.{definition.id}: options: {'; '.join(failures)}", path or self.path, line)
        hashed: dict[str, str] = {"definition": json.dumps(definition.model_dump(mode="json", by_alias=True), sort_keys=True)}
        known = [*RUN_VARIABLES]
        steps = []
        for index, step in enumerate(definition.steps):
            steps.append(self.compile_step(definition, step, ["steps", index], raw, known, hashed))
            known.extend(SCORE_VARIABLES if step.kind == "score" else [step.id])
        fingerprint = hashlib.sha256(json.dumps(hashed, sort_keys=True).encode()).hexdigest()[:16]
        return CompiledScorer(definition, steps, options_model, self.templates, fingerprint, option_rules)

    def compile_step(
        self,
        definition: ScorerDefinition,
        step: LLMStep | ReasonStep | ScoreStep,
        loc: list[Any],
        raw: Any,
        known: list[str],
        hashed: dict[str, str],
    ) -> CompiledStep:
        label = f"{definition.id}.{step.id}"

        def located(field: str, build: Callable[[], Any]) -> Any:
            """Runs `build`; a ConfigError without a place gets the place of `field`."""
            try:
                return build()
            except ConfigError as exc:
                if exc.path is not None:
                    raise
                path, line = locate(raw, [*loc, field])
                raise ConfigError(exc.message, path or self.path, line) from None

        skip_source = step.skip_if
        skip_if = located("skip_if", lambda: Expression(skip_source, f"{label}.skip_if")) if skip_source else None
        if isinstance(step, ScoreStep):
            values: dict[str, Callable[[Mapping[str, Any]], Any]] = {}
            for name, value in step.values.items():
                where = f"{label}.values.{name}"
                values[name] = located("values", lambda: value.compile(where) if isinstance(value, Reducer) else Expression(value, where))
            score_source = step.score
            score = located("score", lambda: Expression(score_source, f"{label}.score"))
            return CompiledStep(step, Sampling(), None, None, None, skip_if, None, values, score)

        sampling_fields = set(Sampling.model_fields)
        sampling = Sampling.model_validate(definition.judge.model_dump(include=sampling_fields, exclude_unset=True))
        if step.judge is not None:
            sampling = sampling.merged(Sampling.model_validate(step.judge.model_dump(include=sampling_fields, exclude_unset=True)))
        variables = [name for name in known if name != "context" or step.uses_context]
        system_name = (step.judge.system if step.judge else None) or definition.judge.system
        system = self.template(system_name, variables, label, hashed) if system_name else None
        prompt = self.template(step.prompt, variables, label, hashed)

        answer_model: type[BaseModel] | None = None
        if step.answer_schema is not None:
            schema_path = self.schema_file(step.answer_schema, locate(raw, [*loc, "schema"]))
            hashed[f"schema:{step.answer_schema}"] = schema_path.read_text(encoding="utf-8")
            model, rules = compile_schema(load_yaml(schema_path), schema_path)
            if isinstance(step, LLMStep):
                rules = [*rules, *located("rules", lambda: compile_rules(step.rules, f"{label} rule"))]
            answer_model = with_rules(model, rules)
            if isinstance(step, ReasonStep) and model.model_fields.get("reason") is None:
                raise ConfigError(f"{label}: a reason schema needs a `reason` string property", schema_path)
            if isinstance(step, LLMStep) and step.on_skip is not None:
                try:
                    answer_model.model_validate(step.on_skip)
                except ValidationError as exc:
                    path, line = locate(raw, [*loc, "on_skip"])
                    raise ConfigError(f"{label}.on_skip does not fit {step.answer_schema}: {exc.errors()[0]['msg']}", path, line) from None
        skip_reason = None
        if isinstance(step, ReasonStep) and step.on_skip is not None:
            reason_source = step.on_skip
            skip_reason = located("on_skip", lambda: self.templates.from_string(reason_source, f"{label}.on_skip"))
        return CompiledStep(step, sampling, system, prompt, answer_model, skip_if, skip_reason, {}, None)

    def template(self, name: str, variables: list[str], label: str, hashed: dict[str, str]) -> Template:
        template = self.templates.load(name, variables, label)
        for referenced in self.templates.referenced(name):
            hashed[f"template:{referenced}"] = self.templates.path_of(referenced).read_text(encoding="utf-8")
        return template


def _title(identifier: str) -> str:
    return "".join(part.capitalize() for part in identifier.replace("-", "_").split("_"))


@cache
def builtin_catalog() -> Catalog:
    """The catalog shipped with the package (loaded once)."""
    return _Loader(builtin_catalog_path(), None).load()


def load_scorers(path: str | os.PathLike[str]) -> Catalog:
    """A host application's catalog: its own scorers, prompts and schemas (relative to the
    YAML file), which shadow the built-in ones of the same name."""
    return _Loader(Path(path), builtin_catalog()).load()


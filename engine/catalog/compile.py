"""Where a definition becomes a plan: templates parsed, schemas turned into answer models,
expressions and rules compiled, once, at load time, so that a broken file fails with its
FILE:LINE:COLUMN and a run only does the work of the run.

Every name an expression or template reads is checked here against what exists at that
point of the scorer (see names.py). Problems are gathered, not raised one by one: a step
that fails is reported and the next steps are still checked, and so are the other scorers,
so that one pass (`scorers check`) lists every mistake.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from jinja2 import TemplateSyntaxError, nodes
from pydantic import BaseModel, ValidationError

from ..errors import CatalogErrors, ConfigError
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
from ..scoring.transcripts import ToolCall, ToolResult
from .answers import (
    CompiledRule,
    SchemaCompiler,
    compile_rules,
    compile_schema,
    rule_failures,
    with_rules,
)
from .expressions import Expression, Reducer
from .lints import threshold_off_scale, values_below
from .names import (
    ANY,
    NUMBER,
    TEXT,
    Boolean,
    Finding,
    ListOf,
    NameChecker,
    Record,
    Scope,
    Shape,
    Text,
    referenced_templates,
    shape_of,
    syntax_finding,
)
from .source import (
    CatalogSource,
    Place,
    load_yaml,
    locate,
    place_in,
    position,
    span_of,
    validation_error,
)
from .spec import (
    RUN_VARIABLES,
    SCORE_VARIABLES,
    ComputeStep,
    LLMStep,
    NotScorableSpec,
    ReasonStep,
    ReducerSpec,
    ScorerDefinition,
    ScoreStep,
)
from .suggest import did_you_mean
from .templates import CompiledPrompt, PromptTemplates, names_read

#: max_tokens of a judge call when neither the scorer's nor the step's `judge:` sets it:
#: room for a long list of claims or verdicts with reasons, and for a reason paragraph.
DEFAULT_MAX_TOKENS = {"llm": 2048, "reason": 1024}

T = TypeVar("T")

#: What the run gives every step, whatever the scorer.
_RUN_NAMES: dict[str, Shape] = {
    "output": TEXT,
    "input": TEXT,
    "ground_truth": TEXT,
    "context": ListOf(TEXT),
    "messages": ListOf(ANY),
    "tool_calls": ListOf(shape_of(ToolCall, "a tool call")),
    "tool_results": ListOf(shape_of(ToolResult, "a tool result")),
    "turns": ListOf(
        Record(
            {"turn": NUMBER, "role": TEXT, "text": TEXT, "tool_calls": ListOf(shape_of(ToolCall, "a tool call")), "tool_results": ListOf(shape_of(ToolResult, "a tool result"))},
            "a turn",
        )
    ),
    "expected_trajectory": ListOf(ANY),
    "metadata": ANY,
}
# A run variable added to the spec without a shape here is still known (its fields are not).
_RUN_NAMES.update({name: ANY for name in RUN_VARIABLES if name not in _RUN_NAMES and name != "options"})
_NO_CONTEXT = "`context` is not available here: a step that reads the context needs `uses_context: true`"


class _StepFailed(Exception):
    """A step had problems (already recorded); its plan is not built."""


def produced_names(step: Any, plan: AnyStepPlan | None) -> dict[str, Shape]:
    """The names a step adds for the steps after it. A new step kind only adds its case here;
    with no plan (the step failed to compile) its names are known but not their shape."""
    if step.kind == "score":
        values = plan.values if isinstance(plan, ScoreStepPlan) else {}
        return {"score": NUMBER, "score_values": Record({name: NUMBER for name in values}, "score_values")}
    if step.kind == "reason":
        return {step.id: TEXT}
    answer_model = getattr(plan, "answer_model", None)
    return {step.id: shape_of(answer_model, step.id) if answer_model is not None else ANY}


def _names_of(step: Any) -> list[str]:
    """The names a step will add, known before it is compiled (to tell "runs later" apart
    from "unknown")."""
    if step.kind == "score":
        return list(SCORE_VARIABLES)
    return list(step.produces()) if hasattr(step, "produces") else [step.id]


class ScorerCompiler:
    """Compiles the definitions of one catalog source against its template and schema folders."""

    def __init__(self, source: CatalogSource) -> None:
        self.source = source
        self.templates = PromptTemplates(source.templates_path)
        self.problems: list[ConfigError] = []
        self._schemas: dict[Path, tuple[type[BaseModel], list[CompiledRule]]] = {}

    # -- problems

    def problem(self, message: str, place: Place | None, fallback: str | Path | None = None) -> None:
        if place is None:
            self.problems.append(ConfigError(message, fallback or self.source.path))
        else:
            self.problems.append(ConfigError(message, place.file or fallback or self.source.path, place.line, place.column))

    def findings_in_yaml(self, findings: Sequence[Finding], data: Any, loc: Sequence[Any], label: str) -> None:
        """Findings of an expression or short template written as a YAML value, placed in it."""
        span = span_of(data, loc)
        for finding in findings:
            place: Place | None = position(data, loc, value=True)
            if span is not None:
                place = place_in(span, pattern=finding.pattern) if finding.pattern else span.start
            self.problem(f"{label}: {finding.message}", place)

    def findings_in_file(self, findings: Sequence[Finding], path: Path, source: str, label: str) -> None:
        lines = source.splitlines()
        for finding in findings:
            column = None
            if finding.pattern and 1 <= finding.line <= len(lines):
                found = re.search(finding.pattern, lines[finding.line - 1])
                if found:
                    column = (found.start(1) if found.re.groups else found.start()) + 1
            self.problems.append(ConfigError(f"{label}: {finding.message}", path, finding.line, column))

    # -- checked pieces

    def expression(self, source: str, data: Any, loc: Sequence[Any], scope: Scope, label: str) -> tuple[Expression, Shape]:
        """A compiled expression whose names were checked (problems recorded); raises
        _StepFailed when it cannot be compiled at all."""
        checker = NameChecker(self.templates.environment, scope)
        shape = checker.expression(source)
        self.findings_in_yaml(checker.findings, data, loc, label)
        try:
            compiled = Expression(source, label)
            compiled.place = _placed(position(data, loc, value=True))
            return compiled, shape
        except ConfigError as exc:
            if not checker.findings:
                self.problem(exc.message, position(data, loc, value=True))
            raise _StepFailed from None

    def rules(self, rules: Sequence[CompiledRule], scope: Scope, label: str, fallback: Path | None = None) -> None:
        """Checks the names of rules' checks and messages (a message names a variable the
        sandbox would refuse when the rule fails, mid-run, otherwise)."""
        for index, rule in enumerate(rules, 1):
            data, loc = rule.written_at if rule.written_at is not None else (None, [None])
            where = f"{label} {index}"
            checker = NameChecker(self.templates.environment, scope)
            checker.expression(rule.rule.check)
            self.findings_in_yaml(checker.findings, data, [*loc, "check"], f"{where} check")
            checker = NameChecker(self.templates.environment, scope)
            checker.template(self.templates.environment.parse(rule.rule.message))
            self.findings_in_yaml(checker.findings, data, [*loc, "message"], f"{where} message")

    def template(self, name: str, data: Any, loc: Sequence[Any], scope: Scope, label: str, hashed: dict[str, str]) -> CompiledPrompt:
        """A template compiled, with its names checked against `scope`, and the templates it
        includes (sharing its variables) checked too; every template it reaches must exist."""
        try:
            self.templates.path_of(name)
        except ConfigError as exc:
            self.problem(f"{label}: {exc.message}{did_you_mean(name, self._template_names())}", position(data, loc, value=True))
            raise _StepFailed from None
        failed = False
        names: set[str] = set()
        pending: list[tuple[str, bool]] = [(name, True)]
        seen: set[str] = set()
        while pending:
            current, shares_variables = pending.pop()
            if current in seen:
                continue
            seen.add(current)
            path, source = self.templates.source(current)
            hashed[f"template:{current}"] = source
            try:
                parsed = self.templates.environment.parse(source, name=current, filename=str(path))
            except TemplateSyntaxError as exc:
                finding = syntax_finding(source, exc, template=True)
                self.findings_in_file([Finding(f"template syntax error: {finding.message}", finding.line, finding.pattern)], path, source, current)
                failed = True
                continue
            for included, kind, line, optional in referenced_templates(parsed):
                try:
                    self.templates.path_of(included)
                except ConfigError:
                    if not optional:
                        message = f"{{% {kind} %}}: template {included!r} not found in {', '.join(map(str, self.templates.search_path))}"
                        self.findings_in_file([Finding(message + did_you_mean(included, self._template_names()), line, rf"(['\"]{re.escape(included)}['\"])")], path, source, current)
                        failed = True
                    continue
                pending.append((included, shares_variables and _is_include(parsed, included)))
            names |= names_read(parsed)
            checker = NameChecker(self.templates.environment, scope if shares_variables else Scope({}), unknown_names_allowed=current != name)
            checker.template(parsed)
            findings = checker.findings if shares_variables else [finding for finding in checker.findings if "not allowed" in finding.message]
            self.findings_in_file(findings, path, source, label)
        if failed:
            raise _StepFailed
        try:
            return self.templates.load(name, frozenset(names))
        except TemplateSyntaxError as exc:  # already reported above, in the file at fault
            raise _StepFailed from exc

    def _template_names(self) -> list[str]:
        return [str(path.relative_to(folder)) for folder in self.templates.search_path for path in folder.rglob("*.j2")]

    def schema(self, path: Path) -> tuple[type[BaseModel], list[CompiledRule]]:
        """A schema file's model and rules, compiled once per catalog (many steps share one)."""
        if path not in self._schemas:
            self._schemas[path] = compile_schema(load_yaml(path), path)
        return self._schemas[path]

    def schema_file(self, name: str, where: Place | None, label: str) -> Path:
        for folder in self.source.schemas_path:
            if (folder / name).is_file():
                return folder / name
        folders = ", ".join(str(folder) for folder in self.source.schemas_path)
        known = [str(path.relative_to(folder)) for folder in self.source.schemas_path if folder.is_dir() for path in folder.rglob("*.yaml")]
        raise ConfigError(
            f"{label}: schema {name!r} not found in {folders}{did_you_mean(name, known)}",
            where.file if where else self.source.path, where.line if where else None, where.column if where else None,
        )  # fmt: skip

    # -- a scorer

    def compile(self, definition: ScorerDefinition, raw: Any) -> ScorerPlan:
        """The scorer's plan; every problem found in it is raised at once as CatalogErrors."""
        self.problems = []
        try:
            plan = self._compile(definition, raw)
        except CatalogErrors:
            raise
        except ConfigError as exc:
            self.problems.append(exc)
        if self.problems:
            raise CatalogErrors(self.problems)
        return plan

    def _compile(self, definition: ScorerDefinition, raw: Any) -> ScorerPlan:
        options_path, _ = locate(raw, ["options"])
        options_model = SchemaCompiler(raw, Path(options_path or self.source.path)).properties_model(
            raw.get("options") or {}, f"{_title(definition.id)}Options", ["options"]
        )
        try:
            defaults = options_model()
        except ValidationError as exc:
            first = exc.errors()[0]
            place = position(raw, ["options", *first["loc"], "default"], value=True)
            may_be_null = f'; an option that may be null is written `type: [TYPE, "null"]`' if first.get("input", ...) is None else ""
            raise ConfigError(
                f"scorers.{definition.id}.options.{'.'.join(map(str, first['loc']))}.default: {first['msg']}{may_be_null}",
                *(place or (self.source.path, None, None)),
            ) from None
        shadowed = sorted(set(options_model.model_fields) & set(dir(dict)))
        if shadowed:
            # In expressions `options.values` is the mapping's method, never the option.
            place = position(raw, ["options", shadowed[0]])
            raise ConfigError(
                f"scorers.{definition.id}.options.{shadowed[0]}: the name is taken by mappings (`options.{shadowed[0]}` would not reach it); choose another",
                *(place or (self.source.path, None, None)),
            )
        options_shape = shape_of(options_model, "options")
        option_rules = compile_rules(definition.option_rules, f"scorers.{definition.id}.option_rules", raw, ["option_rules"])
        checked = len(self.problems)
        self.rules(option_rules, Scope({"options": options_shape}), f"scorers.{definition.id}.option_rules")
        # Rules that name what is not there were just reported; evaluating them would only fail again.
        names_ok = len(self.problems) == checked
        failures = [] if definition.abstract or not names_ok else rule_failures(option_rules, {"options": defaults.model_dump()})
        if failures:
            # A concrete scorer must be usable as written: fail now, at the scorer's name in this file.
            place = position(self.source.scorers, [definition.id])
            self.problem(f"scorers.{definition.id}: options: {'; '.join(failures)}", place)
        # Rate limits decide how fast, not what is judged: they stay out of the fingerprint.
        described = definition.model_dump(mode="json", by_alias=True, exclude={"judge": {"rpm", "tpm"}})
        hashed: dict[str, str] = {"definition": json.dumps(described, sort_keys=True)}
        scope = Scope({**_RUN_NAMES, "options": options_shape})
        later = {name: f"{name!r} is the result of step {step.id!r}, which runs after this one" for step in definition.steps for name in _names_of(step)}
        scope = Scope(scope.names, later)
        steps: list[AnyStepPlan | None] = []
        for index, step in enumerate(definition.steps):
            compiler = _StepCompiler(self, definition, step, ["steps", index], raw, scope)
            try:
                compiled = compiler.compile(hashed)
                plan: AnyStepPlan | None = dataclasses.replace(compiled, reads=compiler.reads(compiled))
            except _StepFailed:
                plan = None
            except ConfigError as exc:
                self.problems.append(exc)
                plan = None
            steps.append(plan)
            # Even a step with a problem tells the later steps what it gives, when it is known,
            # so that their own mistakes are found in the same pass.
            scope = scope.with_names(compiler.produced if compiler.produced is not None else produced_names(step, plan))
        if self.problems:
            raise CatalogErrors(self.problems)
        return ScorerPlan(
            id=definition.id,
            name=definition.name,
            description=definition.description,
            direction=definition.direction,
            requires=tuple(definition.requires),
            steps=tuple(step for step in steps if step is not None),
            options_model=options_model,
            option_rules=tuple(option_rules),
            default_model=definition.judge.model,
            rpm=definition.judge.rpm,
            tpm=definition.judge.tpm,
            judge_defaults={"timeout": definition.judge.timeout, "http_retries": definition.judge.retries},
            max_input_chars=definition.judge.max_input_chars,
            long_input=definition.judge.long_input,
            jury=JuryPlan(
                models=tuple(definition.judges.models), aggregate=definition.judges.aggregate,
                threshold=definition.judges.threshold, margin=definition.judges.margin,
            ) if definition.judges is not None else None,  # fmt: skip
            context_from_tool_results=definition.context_from_tool_results,
            fingerprint=hashlib.sha256(json.dumps(hashed, sort_keys=True).encode()).hexdigest()[:16],
        )


@functools.lru_cache(maxsize=1024)  # by tree: a partial is checked for every step that includes it
def _is_include(parsed: nodes.Template, name: str) -> bool:
    """Whether `name` is included (it sees the includer's variables) rather than imported."""
    return any(isinstance(node.template, nodes.Const) and node.template.value == name for node in parsed.find_all(nodes.Include))


class _StepCompiler:
    """One step of one definition, compiled against the names its place in the scorer gives."""

    def __init__(
        self, scorer: ScorerCompiler, definition: ScorerDefinition, step: LLMStep | ReasonStep | ScoreStep | ComputeStep, loc: list[Any], raw: Any, scope: Scope
    ) -> None:
        self.scorer = scorer
        self.definition = definition
        self.step = step
        self.loc = loc
        self.raw = raw
        self.label = f"{definition.id}.{step.id}"
        #: What the step adds for later steps, when only compiling it can tell (a compute step's values).
        self.produced: dict[str, Shape] | None = None
        self.rule_reads: frozenset[str] = frozenset()  # what the answer's rules read (set with the answer model)
        uses_context = getattr(step, "uses_context", False)
        # Without `uses_context` a step is not given the context: say so rather than "unknown".
        self.scope = scope if uses_context else scope.without("context", _NO_CONTEXT)

    def at(self, *fields: Any) -> list[Any]:
        return [*self.loc, *fields]

    @contextmanager
    def placed(self, *fields: Any) -> Iterator[None]:
        """A ConfigError without a place gets the place of the value at `fields`."""
        try:
            yield
        except ConfigError as exc:
            if exc.path is not None:
                raise
            place = position(self.raw, self.at(*fields), value=True)
            raise ConfigError(exc.message, *(place or (self.scorer.source.path, None, None))) from None

    def compile(self, hashed: dict[str, str]) -> AnyStepPlan:
        step, label = self.step, self.label
        skip_if = self.scorer.expression(step.skip_if, self.raw, self.at("skip_if"), self.scope, f"{label}.skip_if")[0] if step.skip_if else None
        if isinstance(step, ScoreStep):
            return self.score_step(step, skip_if)
        if isinstance(step, ComputeStep):
            return self.compute_step(step, skip_if)
        sampling_fields = set(Sampling.model_fields)
        judge = self.definition.judge
        sampling = Sampling.model_validate(judge.model_dump(include=sampling_fields, exclude_unset=True))
        if step.judge is not None:
            sampling = sampling.merged(Sampling.model_validate(step.judge.model_dump(include=sampling_fields, exclude_unset=True)))
        if sampling.max_tokens is None:
            # Every call has a limit: a small model can keep generating inside a JSON grammar.
            sampling = sampling.model_copy(update={"max_tokens": DEFAULT_MAX_TOKENS[step.kind]})
        system_name = (step.judge.system if step.judge else None) or judge.system
        system_loc = self.at("judge", "system") if step.judge and step.judge.system else ["judge", "system"]
        system = self._attempt(lambda: self.scorer.template(system_name, self.raw, system_loc, self.scope, label, hashed)) if system_name else None
        prompt = self._attempt(lambda: self.scorer.template(step.prompt, self.raw, self.at("prompt"), self.scope, label, hashed))
        answer_model = self.answer_model(hashed)
        if prompt is None or (system_name and system is None):
            if isinstance(step, LLMStep) and answer_model is not None:
                self.produced = {step.id: shape_of(answer_model, step.id)}  # later steps are still checked against it
            raise _StepFailed
        if isinstance(step, ReasonStep):
            skip_reason = self.skip_reason(step) if step.on_skip is not None else None
            return ReasonStepPlan(
                id=step.id, skip_if=skip_if, uses_context=step.uses_context, prompt=prompt, system=system,
                answer_model=answer_model, sampling=sampling, on_skip=skip_reason,
            )  # fmt: skip
        assert answer_model is not None  # an llm step's schema is required by the spec
        return JudgeStepPlan(
            id=step.id, skip_if=skip_if, uses_context=step.uses_context, prompt=prompt, system=system,
            answer_model=answer_model, sampling=sampling, on_skip=step.on_skip,
        )  # fmt: skip

    def reads(self, plan: AnyStepPlan) -> frozenset[str]:
        """The variables `plan` reads: its skip condition's, its templates' (includes too), its
        answer rules', its values' and score's; a step waits for the earlier steps it reads."""
        found: set[str] = set(_reads(plan.skip_if)) if plan.skip_if is not None else set()
        if isinstance(plan, (JudgeStepPlan, ReasonStepPlan)):
            found |= plan.prompt.names | (plan.system.names if plan.system is not None else frozenset()) | self.rule_reads
            if isinstance(plan, ReasonStepPlan) and plan.on_skip is not None:
                found |= plan.on_skip.names
        elif isinstance(plan, ScoreStepPlan):
            found |= _reads(plan.score).union(*(_reads(value) for value in plan.values.values())) - set(plan.values)
        elif isinstance(plan, ComputeStepPlan):
            found |= frozenset().union(*(_reads(value) for value in plan.values.values())) - set(plan.values)
        return frozenset(found)

    def _attempt(self, build: Callable[[], T]) -> T | None:
        """Builds a part; a failure is recorded (None) and the step's other parts are still checked."""
        try:
            return build()
        except _StepFailed:
            return None

    def skip_reason(self, step: ReasonStep) -> CompiledPrompt:
        assert step.on_skip is not None
        source = step.on_skip
        with self.placed("on_skip"):
            prompt = self.scorer.templates.from_string(source, f"{self.label}.on_skip")
        checker = NameChecker(self.scorer.templates.environment, self.scope)
        checker.template(self.scorer.templates.environment.parse(source))
        self.scorer.findings_in_yaml(checker.findings, self.raw, self.at("on_skip"), f"{self.label}.on_skip")
        return prompt

    def score_step(self, step: ScoreStep, skip_if: Evaluable | None) -> ScoreStepPlan:
        values: dict[str, Evaluable] = {}
        scope = values_below(self.scope, step.values, self.raw, self.at("values"))
        for name, value in step.values.items():
            where = f"{self.label}.values.{name}"
            if isinstance(value, ReducerSpec):
                values[name] = self.reducer(value, scope, self.at("values", name), where)
            else:
                values[name] = self.scorer.expression(value, self.raw, self.at("values", name), scope, where)[0]
            scope = scope.with_names({name: NUMBER})
        score, shape = self.scorer.expression(step.score, self.raw, self.at("score"), scope, f"{self.label}.score")
        if isinstance(shape, (Boolean, Text, ListOf, Record)):
            self.scorer.problem(
                f"{self.label}.score: {step.score!r} gives {shape.describe()}, not a number"
                + (" (write `1 if ... else 0` to turn a condition into a number)" if isinstance(shape, Boolean) else ""),
                position(self.raw, self.at("score"), value=True),
            )
        on_skip = step.on_skip.not_scorable if isinstance(step.on_skip, NotScorableSpec) else step.on_skip
        return ScoreStepPlan(id=step.id, skip_if=skip_if, values=values, score=score, round=step.round, on_skip=on_skip)

    def compute_step(self, step: ComputeStep, skip_if: Evaluable | None) -> ComputeStepPlan:
        """Values computed in order, each seeing the ones before it; the step gives later
        steps an object of them (its id), whose fields are known from the expressions."""
        values: dict[str, Evaluable] = {}
        shapes: dict[str, Shape] = {}
        scope = values_below(self.scope, step.values, self.raw, self.at("values"))
        for name, source in step.values.items():
            where = f"{self.label}.values.{name}"
            values[name], shapes[name] = self.scorer.expression(source, self.raw, self.at("values", name), scope, where)
            scope = scope.with_names({name: shapes[name]})
        self.produced = {step.id: Record(shapes, step.id)}
        return ComputeStepPlan(id=step.id, skip_if=skip_if, values=values, on_skip=step.on_skip)

    def reducer(self, spec: ReducerSpec, scope: Scope, loc: list[Any], where: str) -> Reducer:
        """A reducer whose `items` must be a list, and whose `where`/`value` see the fields of its items."""
        with self.placed(*loc[len(self.loc) :]):
            reducer = Reducer(spec, where)
        reducer.items.place = _placed(position(self.raw, [*loc, "items"], value=True))
        reducer.per_item.place = _placed(position(self.raw, [*loc, "where" if spec.where is not None else "value"], value=True))
        _, listed = self.scorer.expression(spec.items, self.raw, [*loc, "items"], scope, f"{where}.items")
        if not isinstance(listed, ListOf) and listed is not ANY:
            lists = [f"{spec.items}.{name}" for name, shape in listed.fields.items() if isinstance(shape, ListOf)] if isinstance(listed, Record) else []
            hint = f"; did you mean {lists[0]!r}?" if len(lists) == 1 else (f" (lists there: {', '.join(lists)})" if lists else "")
            what = f"has the fields {', '.join(listed.fields)}" if isinstance(listed, Record) else f"is {listed.describe()}"
            self.scorer.problem(f"{where}.items: {spec.items!r} is not a list (it {what}){hint}", position(self.raw, [*loc, "items"], value=True))
        item = listed.item if isinstance(listed, ListOf) else ANY
        per_item = scope.with_names({"item": item, "rank": NUMBER})
        if spec.where is not None:
            self.scorer.expression(spec.where, self.raw, [*loc, "where"], per_item, f"{where}.where")
        if spec.value is not None:
            _, value = self.scorer.expression(spec.value, self.raw, [*loc, "value"], per_item, f"{where}.value")
            if isinstance(value, (Boolean, Text, ListOf, Record)) and spec.reduce in ("mean", "sum", "min", "max"):
                self.scorer.problem(
                    f"{where}.value: {spec.value!r} gives {value.describe()}, not a number"
                    + (" (count items with `reduce: ratio` or `count` and `where:`, or write `1 if ... else 0`)" if isinstance(value, Boolean) else ""),
                    position(self.raw, [*loc, "value"], value=True),
                )
        return reducer

    def answer_model(self, hashed: dict[str, str]) -> type[BaseModel] | None:
        step, label = self.step, self.label
        assert not isinstance(step, (ScoreStep, ComputeStep))
        if step.answer_schema is None:
            return None
        with self.placed("schema"):
            schema_path = self.scorer.schema_file(step.answer_schema, position(self.raw, self.at("schema"), value=True), label)
        hashed[f"schema:{step.answer_schema}"] = schema_path.read_text(encoding="utf-8")
        model, rules = self.scorer.schema(schema_path)
        if isinstance(step, LLMStep):
            rules = [*rules, *compile_rules(step.rules, f"{label} rule", self.raw, self.at("rules"))]
            # A rule sees the earlier steps and the fields of the answer it checks.
            answer_fields = shape_of(model, f"{step.id}'s answer")
            assert isinstance(answer_fields, Record)
            self.scorer.rules(rules, self.scope.with_names(answer_fields.fields), f"{label} rule")
        answer_model = with_rules(model, rules)
        self.rule_reads = frozenset().union(*(rule.names for rule in rules))
        if isinstance(step, ReasonStep) and model.model_fields.get("reason") is None:
            raise ConfigError(f"{label}: a reason schema needs a `reason` string property", schema_path)
        if isinstance(step, LLMStep) and step.on_skip is not None:
            try:
                answer_model.model_validate(step.on_skip)
            except ValidationError as exc:
                place = position(self.raw, self.at("on_skip"), value=True)
                raise ConfigError(f"{label}.on_skip does not fit {step.answer_schema}: {exc.errors()[0]['msg']}", *(place or (None, None, None))) from None
        return answer_model




def _placed(place: Place | None) -> str | None:
    return f"{place.file}:{place.line}:{place.column}" if place is not None else None


def _reads(evaluable: Evaluable) -> frozenset[str]:
    # Expressions and reducers compiled here know every name they read, functions included.
    return frozenset(getattr(evaluable, "reads", evaluable.names))


def _title(identifier: str) -> str:
    return "".join(part.capitalize() for part in identifier.replace("-", "_").split("_"))


def _first_duplicate_step(raw: Any, scorer_id: str) -> ConfigError | None:
    """A second step with the id of an earlier one, at its own `id:` (the spec would only
    name the scorer)."""
    steps = raw.get("steps") if isinstance(raw, Mapping) else None
    if not isinstance(steps, list):
        return None
    seen: dict[Any, int] = {}
    for index, step in enumerate(steps):
        step_id = step.get("id") if isinstance(step, Mapping) else None
        if step_id is None:
            continue
        if step_id in seen:
            place = position(raw, ["steps", index, "id"], value=True)
            return ConfigError(f"scorers.{scorer_id}.steps.{index}.id: step id {step_id!r} is used twice (first by step {seen[step_id] + 1}); step ids must be unique", *(place or (None, None, None)))
        seen[step_id] = index
    return None


def compile_catalog(
    source: CatalogSource, read: set[Path] | None = None, with_inherited: bool = True
) -> dict[str, tuple[ScorerDefinition, ScorerPlan]]:
    """Every scorer the source offers (only its own with `with_inherited=False`), validated
    and compiled, by id. Every problem of every scorer is gathered and raised at once
    (CatalogErrors); a scorer with a problem is not compiled further, the others are. `read`
    is given the template and schema files used."""
    compiler = ScorerCompiler(source)
    compiled: dict[str, tuple[ScorerDefinition, ScorerPlan]] = {}
    problems: list[ConfigError] = []
    inherited = source.fallback.resolved() if source.fallback else {}
    ids = [*source.scorers, *(scorer_id for scorer_id in inherited if scorer_id not in source.scorers)] if with_inherited else list(source.scorers)
    for scorer_id in ids:
        try:
            raw = source.raw_definition(scorer_id) if scorer_id in source.scorers else inherited[scorer_id]
            if (replaced := source.replacement_problem(scorer_id)) is not None:
                raise replaced
            duplicate = _first_duplicate_step(raw, scorer_id)
            if duplicate is not None:
                raise duplicate
            try:
                definition = ScorerDefinition.model_validate({**raw, "id": scorer_id})
            except ValidationError as exc:
                raise validation_error(exc, raw, f"scorers.{scorer_id}", source.path, ScorerDefinition) from None
            plan = compiler.compile(definition, raw)
            if definition.judges is not None and (off := threshold_off_scale(definition.judges.threshold, plan, plan.options_model())):
                where = position(raw, ["judges", "threshold"], value=True) or Place(str(source.path), 0, 0)
                raise ConfigError(f"scorers.{scorer_id}.judges.threshold: {off}", where.file, where.line or None, where.column)
            compiled[scorer_id] = (definition, plan)
        except CatalogErrors as exc:
            problems.extend(exc.problems)
        except ConfigError as exc:
            problems.append(exc)
        except _StepFailed:
            continue  # its problems were recorded with the step's
    if problems:
        raise CatalogErrors(_unique(problems))
    if read is not None:
        read |= compiler.templates.found | compiler._schemas.keys()
    return compiled


def _unique(problems: list[ConfigError]) -> list[ConfigError]:
    """Each problem once, in file order: a mistake in a shared template, or in a `defaults:`
    block every scorer starts from, is found once per scorer or step but is one mistake."""
    seen: set[Any] = set()
    unique = []
    for problem in problems:
        key = (problem.path, problem.line, problem.column) if problem.line is not None else str(problem)
        if key not in seen:
            seen.add(key)
            unique.append(problem)
    return sorted(unique, key=lambda problem: (problem.path or "", problem.line or 0, problem.column or 0))

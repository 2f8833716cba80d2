"""Where a definition becomes a plan: templates parsed, schemas turned into answer models,
expressions and rules compiled, once, at load time, so that a broken file fails with its
FILE:LINE:COLUMN and a run only does the work of the run.

Each step is compiled by its kind (`scoring/steps/`), through a `_StepBuilder` that checks
every piece the kind asks for and places each problem in the author's file. Every name an
expression or template reads is checked against what exists at that point of the scorer
(see names.py). Problems are gathered, not raised one by one: a step
that fails is reported and the next steps are still checked, and so are the other scorers,
so that one pass (`scorers check`) lists every mistake.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from jinja2 import TemplateSyntaxError
from pydantic import BaseModel, ValidationError

from ..collector import collector_held
from ..errors import CatalogErrors, ConfigError
from ..judge import Sampling
from ..judge.settings import JudgeSettings
from ..scoring.pass_line import PassLine
from ..scoring.plan import CascadePlan, Evaluable, JuryPlan, ScorerPlan, StepPlan
from ..scoring.steps import ReducerSpec, Rule, StepFailed, StepJudge, StepSpec, step_kind
from .answer_rules import CompiledRule, compile_rules, rule_failures, with_rules
from .answers import SchemaCompiler, schema_file
from .expressions import Expression, Reducer
from .definitions import definition_of, offered, unique_problems
from .declarations import Declarations, Uses, as_read, default_refused, numeric_defaults, scale_of
from .placing import Placing
from .lints import values_below
from .schema_limits import refused_defaults
from .setting_checks import held, scorer_facts
from .names import Finding, NameChecker, Record, Scope, Shape, referenced_templates, shape_of, syntax_finding
from .template_flow import TemplateChecker
from .root_setting import at_root
from .run_scope import run_names
from .source import CatalogSource, Place, locate, position
from .spec import ScorerDefinition
from .suggest import did_you_mean
from .templates import CompiledPrompt, PromptTemplates, is_included, names_read


_NO_CONTEXT = "`context` is not available here: a step that reads the context needs `uses_context: true`"


class ScorerCompiler(Placing):
    """Compiles the definitions of one catalog source against its template and schema folders."""

    def __init__(self, source: CatalogSource) -> None:
        self.source = source
        self.templates = PromptTemplates(source.templates_path)
        self.problems: list[ConfigError] = []
        #: What loads but may not be meant, found while compiling (each a CatalogWarning).
        self.warnings: list[ConfigError] = []
        #: What the scorer being compiled reads and scores (see declarations.py).
        self.uses = Uses()
        self.option_defaults: dict[str, float] = {}  # of the scorer being compiled (see Operations)
        self._schemas: dict[Path, tuple[type[BaseModel], list[CompiledRule]]] = {}

    # -- checked pieces

    def expression(
        self, source: str, data: Any, loc: Sequence[Any], scope: Scope, label: str, local: Mapping[str, Shape] | None = None
    ) -> tuple[Expression, Shape]:
        """A compiled expression whose names were checked (problems recorded); raises
        StepFailed when it cannot be compiled at all. `local`: what is known where it is
        evaluated (a `skip_if` that did not hold)."""
        checker = NameChecker(self.templates.environment, scope)
        checker.option_defaults = self.option_defaults
        shape = checker.expression(source, local)
        self.uses.add(checker, tuple(loc))
        self.findings_in_yaml(checker.findings, data, loc, label)
        try:
            compiled = Expression(source, label)
            compiled.place = _placed(position(data, loc, value=True))
            return compiled, shape
        except ConfigError as exc:
            if not checker.findings:
                self.problem(exc.message, position(data, loc, value=True))
            raise StepFailed from None

    def rules(self, rules: Sequence[CompiledRule], scope: Scope, label: str, local: Mapping[str, Shape] | None = None) -> None:
        """Checks the names of rules' checks and messages (a message names a variable the
        sandbox would refuse when the rule fails, mid-run, otherwise)."""
        for index, rule in enumerate(rules, 1):
            data, loc = rule.written_at if rule.written_at is not None else (None, [None])
            where = f"{label} {index}"
            checker = NameChecker(self.templates.environment, scope)
            checker.expression(rule.rule.check, local)
            self.uses.add(checker)
            self.findings_in_yaml(checker.findings, data, [*loc, "check"], f"{where} check")
            message = TemplateChecker(self.templates.environment, scope)
            message.template(self.templates.environment.parse(rule.rule.message), local)
            self.uses.add(message)
            self.findings_in_yaml(message.findings, data, [*loc, "message"], f"{where} message")

    def template(
        self, name: str, data: Any, loc: Sequence[Any], scope: Scope, label: str, hashed: dict[str, str], local: Mapping[str, Shape] | None = None
    ) -> CompiledPrompt:
        """A template compiled, with its names checked against `scope`, and the templates it
        includes (sharing its variables) checked too; every template it reaches must exist.
        `local`: what is known where it renders (a `skip_if` that did not hold)."""
        try:
            self.templates.path_of(name)
        except ConfigError as exc:
            self.problem(f"{label}: {exc.message}{did_you_mean(name, self._template_names())}", position(data, loc, value=True))
            raise StepFailed from None
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
                pending.append((included, shares_variables and is_included(parsed, included)))
            names |= names_read(parsed) if shares_variables else frozenset()  # an imported macro's parameters are its own
            checker = TemplateChecker(self.templates.environment, scope if shares_variables else Scope({}), unknown_names_allowed=current != name)
            checker.template(parsed, local if shares_variables else None)
            if shares_variables:
                self.uses.add(checker)
            findings = checker.findings if shares_variables else [finding for finding in checker.findings if "not allowed" in finding.message]
            self.findings_in_file(findings, path, source, label)
        if failed:
            raise StepFailed
        try:
            return self.templates.load(name, frozenset(names))
        except TemplateSyntaxError as exc:
            # What Jinja's code generator refuses in a template that parsed (a block defined
            # twice, a loop assigning to `loop`, ...): at its line, or the step would be dropped unsaid.
            path, source = self.templates.source(name)
            if not any(problem.path == str(path) and problem.line == exc.lineno for problem in self.problems):  # an unknown filter is named already
                self.findings_in_file([Finding(f"template error: {exc.message}", exc.lineno, None)], path, source, name)
            raise StepFailed from None

    def _template_names(self) -> list[str]:
        return [str(path.relative_to(folder)) for folder in self.templates.search_path for path in folder.rglob("*.j2")]

    def schema(self, path: Path) -> tuple[type[BaseModel], list[CompiledRule]]:
        """A schema file's model and rules, compiled once per catalog (many steps share one);
        a `default` its own field refuses is a problem of the file."""
        if path not in self._schemas:
            compiled = schema_file(path)
            self._schemas[path] = (compiled.model, compiled.rules)
            self.problems.extend(refused_defaults(compiled.data, path))
        return self._schemas[path]

    def schema_file(self, name: str, where: Place | None, label: str) -> Path:
        found = self.source.schema_file(name)
        if found is not None:
            return found
        folders = ", ".join(str(folder) for folder in self.source.schemas_path)
        known = [str(path.relative_to(folder)) for folder in self.source.schemas_path if folder.is_dir() for path in folder.rglob("*.yaml")]
        raise ConfigError(
            f"{label}: schema {name!r} not found in {folders}{did_you_mean(name, known)}",
            where.file if where else self.source.path, where.line if where else None, where.column if where else None,
        )

    # -- a scorer

    def compile(self, definition: ScorerDefinition, raw: Any) -> ScorerPlan:
        """The scorer's plan; every problem found in it is raised at once as CatalogErrors,
        each in the author's own file."""
        self.problems = []
        warned = len(self.warnings)
        plan: ScorerPlan | None = None
        try:
            plan = self._compile(definition, raw)
        except CatalogErrors as exc:
            if exc.problems is not self.problems:
                self.problems.extend(exc.problems)
        except ConfigError as exc:
            self.problems.append(exc)
        if definition.id in self.source.scorers:
            self.problems = [self.in_own_file(problem, definition.id) for problem in self.problems]
            self.warnings[warned:] = [self.in_own_file(warning, definition.id) for warning in self.warnings[warned:]]
        if self.problems or plan is None:
            raise CatalogErrors(self.problems)
        return plan

    def _compile(self, definition: ScorerDefinition, raw: Any) -> ScorerPlan:
        options_model, options_shape, option_rules = self._options(definition, raw)
        if "empty_output" in raw and "output" not in definition.requires:
            self.problem(f"scorers.{definition.id}.empty_output: only a scorer that requires `output` can say what an empty one is", position(raw, ["empty_output"]))
        hashed: dict[str, str] = {"definition": _described(definition)}
        self.uses = Uses()
        scale = scale_of(options_model)
        self.option_defaults = numeric_defaults(options_model)
        steps = self._steps(definition, raw, Scope({**run_names(definition.requires), "options": as_read(options_shape, scale)}), hashed)
        declarations = Declarations(self, definition, raw, scale)
        scores = declarations.score_range()
        if definition.id in self.source.scorers:
            declarations.own_options(steps)
        declarations.second_output_shown(steps)
        if self.problems:
            raise CatalogErrors(self.problems)
        plan = ScorerPlan(
            id=definition.id,
            name=definition.name,
            description=definition.description,
            direction=definition.direction,
            requires=tuple(definition.requires),
            pairwise=definition.pairwise,
            steps=tuple(step for step in steps if step is not None),
            options_model=options_model,
            option_rules=tuple(option_rules),
            judge_defaults=JudgeSettings(
                model=definition.judge.model, timeout=definition.judge.timeout, retries=definition.judge.retries, rpm=definition.judge.rpm, tpm=definition.judge.tpm
            ),
            max_input_chars=definition.judge.max_input_chars,
            confidence_samples=definition.judge.confidence_samples,
            long_input=definition.judge.long_input,
            empty_output=definition.empty_output,
            jury=JuryPlan(
                models=tuple(definition.judges.models), aggregate=definition.judges.aggregate,
                threshold=definition.judges.threshold, margin=definition.judges.margin,
            ) if definition.judges is not None else None,
            cascade=CascadePlan(**definition.cascade.model_dump()) if definition.cascade is not None else None,
            context_from_tool_results=definition.context_from_tool_results,
            pass_line=PassLine.of(definition.threshold, definition.direction, scale or 1.0),
            on_scale=scores.on_scale,
            score_range=scores.span,
            fingerprint=hashlib.sha256(json.dumps(hashed, sort_keys=True).encode()).hexdigest()[:16],
        )
        self.settings_held(held("scorers.*", f"scorers.{definition.id}", raw, scorer_facts(plan, raw, lambda: plan.scores_range(plan.options_model()))), raw)
        if self.problems:
            raise CatalogErrors(self.problems)
        return plan

    def _options(self, definition: ScorerDefinition, raw: Any) -> tuple[type[BaseModel], Shape, list[CompiledRule]]:
        """The scorer's options model, the shape expressions see of it, and its rules; the
        defaults checked against both."""
        options_path, _ = locate(raw, ["options"])
        options_model = SchemaCompiler(raw, Path(options_path or self.source.path)).properties_model(
            raw.get("options") or {}, f"{_title(definition.id)}Options", ["options"]
        )
        try:
            defaults = options_model()
        except ValidationError as exc:
            raise default_refused(definition, raw, exc.errors()[0], self.source.path) from None
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
        self.rules(option_rules, Scope({"options": as_read(options_shape, None)}), f"scorers.{definition.id}.option_rules")
        # Rules that name what is not there were just reported; evaluating them would only fail again.
        names_ok = len(self.problems) == checked
        failures = [] if definition.abstract or not names_ok else rule_failures(option_rules, {"options": defaults.model_dump()})
        if failures:
            # A concrete scorer must be usable as written: fail now, at the scorer's name in this file.
            place = position(self.source.scorers, [definition.id])
            self.problem(f"scorers.{definition.id}: options: {'; '.join(failures)}", place)
        return options_model, options_shape, option_rules

    def _steps(self, definition: ScorerDefinition, raw: Any, scope: Scope, hashed: dict[str, str]) -> list[StepPlan | None]:
        """Each step's plan (None for a step with a problem, reported in `self.problems`);
        `scope` holds what every step may read, `hashed` gathers the texts they depend on."""
        later = {name: f"{name!r} is the result of step {step.id!r}, which runs after this one" for step in definition.steps for name in step_kind(step.kind).names(step)}
        scope = Scope(scope.names, later)
        steps: list[StepPlan | None] = []
        for index, step in enumerate(definition.steps):
            builder = _StepBuilder(self, definition, step, ["steps", index], raw, scope, hashed)
            try:
                plan: StepPlan | None = builder.build()
            except StepFailed:
                plan = None
            except ConfigError as exc:
                self.problems.append(exc)
                plan = None
            steps.append(plan)
            # Even a step with a problem tells the later steps what it gives, when it is known,
            # so that their own mistakes are found in the same pass.
            scope = scope.with_names(builder.produced if builder.produced is not None else step_kind(step.kind).names(step))
            if builder.ruled is not None:
                scope = scope.constrained_by_rules(step.id, builder.ruled)
        return steps


def _described(definition: ScorerDefinition) -> str:
    """The definition as its fingerprint reads it (rate limits decide how fast, not what is judged: they stay out)."""
    described = definition.model_dump(mode="json", by_alias=True, exclude={"judge": {"rpm", "tpm"}})
    for written in described["steps"]:
        for added in ("examples", "bounds", "expected_value"):
            if added in written and written[added] in ([], {}, False):
                del written[added]  # a step without them keeps the fingerprint it had before they existed
    for block, added in (("judge", "confidence_samples"), ("cascade", "min_confidence")):  # likewise settings added later, unset
        if (described.get(block) or {}).get(added, 0) is None:
            del described[block][added]
    return json.dumps(described, sort_keys=True)


class _StepBuilder:
    """One step of one definition, compiled by its kind against the names its place in the
    scorer gives (the `StepBuilder` a kind's `compile` is given)."""

    def __init__(self, scorer: ScorerCompiler, definition: ScorerDefinition, step: StepSpec, loc: list[Any], raw: Any, scope: Scope, hashed: dict[str, str]) -> None:
        self.scorer = scorer
        self.definition = definition
        self.step = step
        self.loc = loc
        self.raw = raw
        self.hashed = hashed
        self.label = f"{definition.id}.{step.id}"
        #: What the step adds for later steps, when only compiling it can tell (a compute step's values).
        self.produced: Mapping[str, Shape] | None = None
        #: When rules check the step's answer: the other steps and run fields they read.
        self.ruled: frozenset[str] | None = None
        self._read: set[str] = set()
        self.kind = step_kind(step.kind)
        self.sources = self.kind.sources(step)
        # Without `uses_context` a step is not given the context: say so rather than "unknown".
        self.scope = scope if self.kind.uses_context(step) else scope.without("context", _NO_CONTEXT)
        #: What a `skip_if` that did not hold tells of what it tests, for the rest of the step.
        self.local: dict[str, Shape] = {}

    def build(self) -> StepPlan:
        """The step's plan, from its kind; raises StepFailed (problems recorded) or ConfigError."""
        step = self.step
        skip_if = self.scorer.expression(step.skip_if, self.raw, self.at("skip_if"), self.scope, f"{self.label}.skip_if")[0] if step.skip_if else None
        if skip_if is not None and step.skip_if is not None:
            self._read |= _reads(skip_if)
            self.local = NameChecker(self.scorer.templates.environment, self.scope).narrowed(step.skip_if, truthy=False)
        plan: StepPlan = self.kind.compile(step, self)
        return dataclasses.replace(plan, skip_if=skip_if, uses_context=self.kind.uses_context(step))

    def at(self, *fields: Any) -> list[Any]:
        return [*self.loc, *fields]

    @contextmanager
    def placed(self, *at: Any) -> Iterator[None]:
        try:
            yield
        except ConfigError as exc:
            if exc.path is not None:
                raise
            place = position(self.raw, self.at(*at), value=True)
            raise ConfigError(exc.message, *(place or (self.scorer.source.path, None, None))) from None

    def problem(self, message: str, *at: Any) -> None:
        self.scorer.problem(message, position(self.raw, self.at(*at), value=True))

    def warning(self, code: str, message: str, *at: Any) -> None:
        self.scorer.warning(code, message, position(self.raw, self.at(*at), value=True))

    def sees(self, names: Mapping[str, Shape]) -> None:
        self.scope = self.scope.with_names(names)

    def gives(self, names: Mapping[str, Shape]) -> None:
        self.produced = names

    def names_read(self) -> frozenset[str]:
        return frozenset(self._read)

    def expression(self, source: str, *at: Any, scope: Scope | None = None) -> tuple[Evaluable, Shape]:
        scope = values_below(scope or self.scope, self.sources, at, self.raw, self.loc)
        expression, shape = self.scorer.expression(source, self.raw, self.at(*at), scope, ".".join([self.label, *map(str, at)]), self.local)
        self._read |= _reads(expression)
        return expression, shape

    def reducer(self, spec: ReducerSpec, *at: Any) -> Evaluable:
        with self.placed(*at):
            reducer = Reducer(spec, ".".join([self.label, *map(str, at)]))
        reducer.items.place = _placed(position(self.raw, self.at(*at, "items"), value=True))
        reducer.per_item.place = _placed(position(self.raw, self.at(*at, "where" if spec.where is not None else "value"), value=True))
        self._read |= reducer.reads
        return reducer

    def template(self, name: str, *at: Any) -> CompiledPrompt:
        prompt = self.scorer.template(name, self.raw, self.at(*at), self.scope, self.label, self.hashed, self.local)
        self._read |= prompt.names
        return prompt

    def inline_template(self, source: str, *at: Any) -> CompiledPrompt:
        where = ".".join([self.label, *map(str, at)])
        with self.placed(*at):
            prompt = self.scorer.templates.from_string(source, where)
        checker = TemplateChecker(self.scorer.templates.environment, self.scope)
        checker.template(self.scorer.templates.environment.parse(source))
        self.scorer.uses.add(checker)
        self.scorer.findings_in_yaml(checker.findings, self.raw, self.at(*at), where)
        self._read |= prompt.names
        return prompt

    def sampling(self, step_judge: StepJudge | None, default_max_tokens: int) -> Sampling:
        fields = set(Sampling.model_fields)
        sampling = Sampling.model_validate(self.definition.judge.model_dump(include=fields, exclude_unset=True))
        if step_judge is not None:
            sampling = sampling.merged(Sampling.model_validate(step_judge.model_dump(include=fields, exclude_unset=True)))
        if sampling.max_tokens is None:
            # Every call has a limit: a small model can keep generating inside a JSON grammar.
            sampling = sampling.model_copy(update={"max_tokens": default_max_tokens})
        return sampling

    def system(self, step_judge: StepJudge | None) -> CompiledPrompt | None:
        name = (step_judge.system if step_judge else None) or self.definition.judge.system
        if not name:
            return None
        loc = self.at("judge", "system") if step_judge and step_judge.system else ["judge", "system"]
        prompt = self.scorer.template(name, self.raw, loc, self.scope, self.label, self.hashed, self.local)
        self._read |= prompt.names
        return prompt

    def scores(self, shape: Shape, *at: Any) -> None:
        self.scorer.uses.scores.append((shape, self.at(*at)))

    def answer_model(self, schema: str, *at: Any, rules: Sequence[Rule] = (), rules_at: Sequence[Any] = ("rules",)) -> type[BaseModel]:
        with self.placed(*at):
            schema_path = self.scorer.schema_file(schema, position(self.raw, self.at(*at), value=True), self.label)
        self.hashed[f"schema:{schema}"] = schema_path.read_text(encoding="utf-8")
        model, schema_rules = self.scorer.schema(schema_path)
        all_rules = [*schema_rules, *compile_rules(rules, f"{self.label} rule", self.raw, self.at(*rules_at))]
        # A rule sees the earlier steps and the fields of the answer it checks.
        answer_fields = shape_of(model, f"{self.step.id}'s answer")
        assert isinstance(answer_fields, Record)
        self.scorer.rules(all_rules, self.scope.with_names(answer_fields.fields), f"{self.label} rule", self.local)
        rules_read = frozenset().union(*(rule.names for rule in all_rules))
        self._read |= rules_read
        if all_rules:
            self.ruled = frozenset(name for name in rules_read if name in self.scope.names and name != "options")
        return with_rules(model, all_rules)


def _placed(place: Place | None) -> str | None:
    return f"{place.file}:{place.line}:{place.column}" if place is not None else None


def _reads(evaluable: Evaluable) -> frozenset[str]:
    # Expressions and reducers compiled here know every name they read, functions included.
    return frozenset(getattr(evaluable, "reads", evaluable.names))


def _title(identifier: str) -> str:
    return "".join(part.capitalize() for part in identifier.replace("-", "_").split("_"))


@collector_held()  # a catalog's models, trees and plans stay alive
def compile_catalog(
    source: CatalogSource, read: set[Path] | None = None, with_inherited: bool = True, warnings: list[ConfigError] | None = None
) -> dict[str, tuple[ScorerDefinition, ScorerPlan]]:
    """Every scorer the source offers (only its own with `with_inherited=False`), validated
    and compiled, by id. Every problem of every scorer is gathered and raised at once
    (CatalogErrors); a scorer with a problem is not compiled further, the others are. `read`
    is given the template and schema files used, `warnings` what the checks found that may
    not be meant."""
    compiler = ScorerCompiler(source)
    compiled: dict[str, tuple[ScorerDefinition, ScorerPlan]] = {}
    problems: list[ConfigError] = []
    for scorer_id in offered(source, with_inherited):
        try:
            definition, raw = definition_of(source, scorer_id)
            compiled[scorer_id] = (definition, compiler.compile(definition, raw))
        except CatalogErrors as exc:
            problems.extend(at_root(source, scorer_id, exc.problems, ScorerCompiler(source).compile))
        except ConfigError as exc:
            problems.append(exc)
        except StepFailed:
            continue  # its problems were recorded with the step's
    if problems:
        raise CatalogErrors(unique_problems(problems))
    if read is not None:
        read |= compiler.templates.found | compiler._schemas.keys()
    if warnings is not None:
        warnings.extend(compiler.warnings)
    return compiled

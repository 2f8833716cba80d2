"""`rules:` of an answer schema (or of a step): checks over the answer and the steps before
it ("as many verdicts as claims"), compiled at load with the place of each mistake, and
enforced when an answer is validated, so a broken rule asks the judge again with its message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jinja2 import TemplateSyntaxError
from pydantic import BaseModel, create_model, model_validator

from ..errors import ConfigError, ExpressionError
from ..scoring.answer_scope import current_answer_scope
from .expressions import Expression
from .names import Scope
from .source import place_in, position, span_of
from .spec import Rule
from .template_flow import TemplateChecker
from .templates import names_read, sandbox

_message_environment = sandbox()

class CompiledRule:
    """A rule ready to check; `written_at` (the YAML it came from, and the path to the rule
    inside it) lets the catalog compiler report a misspelt name at its own line and column."""

    def __init__(self, rule: Rule, where: str, written_at: tuple[Any, list[Any]] | None = None) -> None:
        self.rule = rule
        self.written_at = written_at
        self.check = Expression(rule.check, where)
        try:
            self._message = _message_environment.prepare(rule.message)  # compiled when a rule first fails
            message_names = names_read(_message_environment.parse(rule.message))
        except TemplateSyntaxError as exc:
            raise ConfigError(f"{where}: invalid message template: {exc.message}") from None
        #: The variables the rule reads (its check and its message).
        self.names: frozenset[str] = self.check.reads | message_names

    def failure(self, variables: Mapping[str, Any]) -> str | None:
        """None when the rule holds, else the message for the judge."""
        try:
            if self.check(variables):
                return None
        except ExpressionError as exc:
            return str(exc)
        return self._message().render(**variables)


def compile_rules(rules: Sequence[Rule], label: str, data: Any = None, loc: Sequence[Any] = ()) -> list[CompiledRule]:
    """Rules compiled; when `data` (the YAML holding the list at `loc`) is given, a broken
    check or message is reported at its own place."""
    compiled = []
    for index, rule in enumerate(rules):
        written_at = (data, [*loc, index]) if data is not None else None
        try:
            compiled.append(CompiledRule(rule, f"{label} {index + 1}", written_at))
        except ConfigError as exc:
            if written_at is None or exc.path is not None:
                raise
            field = "message" if "message template" in exc.message else "check"
            place = position(data, [*loc, index, field], value=True)
            span = span_of(data, [*loc, index, field])
            # The checker says where inside the check or message it breaks (an unclosed
            # bracket, an unknown filter), and which name was meant.
            checker = TemplateChecker(_message_environment, Scope({}))
            if field == "check":
                checker.expression(rule.check)
            else:
                try:
                    checker.template(_message_environment.parse(rule.message))
                except TemplateSyntaxError:
                    pass
            finding = next((found for found in checker.findings if not found.message.startswith("unknown name")), None)
            message = exc.message
            if finding is not None:
                if span is not None and finding.pattern:
                    place = place_in(span, pattern=finding.pattern)
                if field == "message":
                    message = f"{label} {index + 1}: invalid message template: {finding.message}"
            raise ConfigError(message, *(place or (None, None, None))) from None
    return compiled


def rule_failures(rules: Sequence[CompiledRule], variables: Mapping[str, Any]) -> list[str]:
    """The messages of the rules that do not hold for `variables` (empty when all hold)."""
    return [message for rule in rules if (message := rule.failure(variables)) is not None]


def with_rules(model: type[BaseModel], rules: Sequence[CompiledRule], name: str | None = None) -> type[BaseModel]:
    """A subclass of `model` whose validation also enforces `rules` (when a scope is set)."""
    if not rules:
        return model

    def enforce_rules(self: BaseModel) -> BaseModel:
        scope = current_answer_scope()
        if scope is None:  # validated outside a run (e.g. a default at load time): no steps to compare
            return self
        failures = rule_failures(rules, {**scope, **self.model_dump()})  # already plain data
        if failures:
            raise ValueError("; ".join(failures))
        return self

    validators: dict[str, Any] = {"enforce_rules": model_validator(mode="after")(enforce_rules)}
    ruled = create_model(
        name or model.__name__,
        __base__=model,
        __doc__=model.__doc__,
        __validators__=validators,
    )
    # `scorers check` tries each rule alone on answers made from the schema (catalog/proving).
    setattr(ruled, ANSWER_RULES, (*answer_rules(model), *rules))
    return ruled


#: The attribute of an answer model holding the rules its validation enforces.
ANSWER_RULES = "__answer_rules__"


def answer_rules(model: type[BaseModel]) -> tuple[CompiledRule, ...]:
    """The rules an answer model's validation enforces (those of its schema file and step)."""
    return tuple(getattr(model, ANSWER_RULES, ()))

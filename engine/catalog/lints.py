"""Warnings about a scorer that loads and runs but may not do what its author meant, found at
load time and shown by `scorers check` (they never stop a catalog from loading):

- a division by a count that can be zero (`matched / steps` where `steps` is a list's
  length) with no guard around it: the item whose list is empty fails at run time;
- an enum value of an answer schema that the step's prompt never mentions and no
  expression compares with: the judge is never told when to give it, and nothing reads it.

Each warning is a ConfigError placed at the text to change, so it reads like a problem.

Also here, as it judges a scorer against what surrounds it rather than its own words: the
refusal of a threshold outside the range of a scorer's scores.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import TemplateSyntaxError, nodes

from ..errors import ConfigError
from ..scoring.plan import ScorerPlan
from ..scoring.shapes import Scope
from ..scoring.steps import StepSources, step_kind
from .source import CatalogSource, LocatedDict, LocatedList, Place, load_yaml, place_in, position, span_of
from .spec import ScorerDefinition
from .templates import PromptTemplates, parse_expression, sandbox

_environment = sandbox()

#: Filters and functions whose result is a count: zero for an empty list or text.
_COUNTING_FILTERS = {"length", "count", "wordcount"}
_COUNTING_FUNCTIONS = {"len"}


@functools.lru_cache(maxsize=4096)
def _parsed(source: str) -> nodes.Node | None:
    try:
        return parse_expression(source)  # as the compiler read it
    except TemplateSyntaxError:
        pass
    try:
        template = _environment.parse(f"{{{{ {source} }}}}")
    except TemplateSyntaxError:
        return None  # reported by the compiler
    outputs = [child for node in template.body if isinstance(node, nodes.Output) for child in node.nodes]
    return outputs[0] if len(outputs) == 1 else None


def written(node: nodes.Node) -> str | None:
    """An expression as an author would write it, for the common forms (names, fields,
    filters, calls, arithmetic); None for others."""
    if isinstance(node, nodes.Name):
        return node.name
    if isinstance(node, nodes.Const):
        return repr(node.value) if isinstance(node.value, str) else str(node.value).lower() if isinstance(node.value, bool) else str(node.value)
    if isinstance(node, nodes.Getattr):
        base = written(node.node)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, nodes.Getitem):
        base, key = written(node.node), written(node.arg)
        return f"{base}[{key}]" if base and key else None
    if isinstance(node, nodes.Filter) and node.node is not None:
        base = written(node.node)
        arguments = [written(argument) for argument in node.args]
        if base is None or None in arguments or node.kwargs:
            return None
        return f"{base} | {node.name}" + (f"({', '.join(arguments)})" if arguments else "")  # type: ignore[arg-type]
    if isinstance(node, nodes.Call) and not node.kwargs:
        callee = written(node.node)
        arguments = [written(argument) for argument in node.args]
        return f"{callee}({', '.join(arguments)})" if callee and None not in arguments else None  # type: ignore[arg-type]
    if isinstance(node, nodes.BinExpr):
        left, right = written(node.left), written(node.right)
        return f"({left} {node.operator} {right})" if left and right else None
    return None


def _is_count(node: nodes.Node, counts: set[str]) -> bool:
    """Whether `node` is a count: a list's or a text's length, a value known to be one, or a
    sum of counts (all of which can be zero)."""
    if isinstance(node, nodes.Filter):
        return node.name in _COUNTING_FILTERS
    if isinstance(node, nodes.Call):
        return isinstance(node.node, nodes.Name) and node.node.name in _COUNTING_FUNCTIONS
    if isinstance(node, (nodes.Name, nodes.Getattr)):
        return written(node) in counts
    if isinstance(node, nodes.Add):
        return _is_count(node.left, counts) and _is_count(node.right, counts)
    return False


def _reads(node: nodes.Node) -> set[str]:
    """The names and fields `node` reads, as written, each at its longest (`a.b`, not `a`)."""
    found: set[str] = set()
    for child in [node, *node.find_all((nodes.Name, nodes.Getattr))]:
        text = written(child) if isinstance(child, (nodes.Name, nodes.Getattr)) else None
        if text is not None:
            found.add(text)
    return {path for path in found if not any(other.startswith(path + ".") for other in found)}


def _bare(text: str) -> str:
    """`text` without the brackets `written` puts around an operation."""
    return text[1:-1] if text.startswith("(") and text.endswith(")") else text


@dataclass(frozen=True)
class Division:
    """A division whose divisor is a count that can be zero, with nothing guarding it."""

    divisor: str | None
    guard: str


def unguarded_divisions(source: str, counts: frozenset[str] = frozenset(), guards: Sequence[set[str]] = ()) -> list[Division]:
    """The divisions of an expression by a count (see `_is_count`) that no condition around
    them tests first (`a / n if n else 0`, `n and a / n`), nor one of `guards` (what the
    step's `skip_if` tests)."""
    if "/" not in source and "%" not in source:  # no division (`/`, `//`) nor remainder (`%`) to look for
        return []
    parsed = _parsed(source)
    return [] if parsed is None else list(_divisions(parsed, set(counts), list(guards)))


def _divisions(node: nodes.Node, counts: set[str], guards: list[set[str]]) -> Iterator[Division]:
    if isinstance(node, (nodes.Div, nodes.FloorDiv, nodes.Mod)) and _is_count(node.right, counts):
        # A test of any name the count is made of guards it: a sum of counts is 0 only when each is.
        if not any(_reads(node.right) & guard for guard in guards):
            divisor, whole = written(node.right), written(node)
            guard = f"`{_bare(whole)} if {_bare(divisor)} else 0`" if whole and divisor else "a condition that the divisor is not 0"
            yield Division(_bare(divisor) if divisor else None, guard)
    if isinstance(node, nodes.CondExpr):
        tested = _reads(node.test)
        yield from _divisions(node.test, counts, guards)
        yield from _divisions(node.expr1, counts, [*guards, tested])
        if node.expr2 is not None:
            yield from _divisions(node.expr2, counts, guards)
        return
    if isinstance(node, nodes.And):
        yield from _divisions(node.left, counts, guards)
        yield from _divisions(node.right, counts, [*guards, _reads(node.left)])
        return
    for child in node.iter_child_nodes():
        yield from _divisions(child, counts, guards)


def values_below(scope: Scope, sources: StepSources, at: Sequence[Any], raw: Any, loc: Sequence[Any]) -> Scope:
    """The scope of an expression written at `at` in a step (`sources`, its pieces): when it
    belongs to one of the step's named values, which are computed in order, naming a value
    that comes later says where it is defined."""
    written = tuple(at)
    mine = next((index for index, value in enumerate(sources.values) if written[: len(value.at)] == value.at), None)
    if mine is None:
        return scope
    below: dict[str, str] = {}
    for value in sources.values[mine + 1 :]:
        if value.text not in scope.names:
            place = position(raw, [*loc, *value.at])
            line = f", line {place.line}" if place is not None else ""
            below[value.text] = f"{value.text!r} is defined below{line}: a value sees only the values above it"
    return Scope(scope.names, {**scope.unavailable, **below})


def zero_division_hint(source: str) -> str:
    """What to write instead of a division that met a zero at run time."""
    parsed = _parsed(source)
    for node in [parsed, *parsed.find_all(nodes.BinExpr)] if parsed is not None else []:
        if not isinstance(node, (nodes.Div, nodes.FloorDiv, nodes.Mod)):
            continue
        divisor, whole = written(node.right), written(node)
        if divisor and whole:
            return f"; when {_bare(divisor)} can be 0, guard the division: `{_bare(whole)} if {_bare(divisor)} else 0`"
    return ""


def jury_threshold_problem(definition: ScorerDefinition, plan: ScorerPlan, raw: Any, source: CatalogSource) -> ConfigError | None:
    """A jury's pass line off the scale of the scores it judges, at its line."""
    if definition.judges is None or (off := threshold_off_scale(definition.judges.threshold, plan, plan.options_model())) is None:
        return None
    where = position(raw, ["judges", "threshold"], value=True) or Place(str(source.path), 0, 0)
    return ConfigError(f"scorers.{definition.id}.judges.threshold: {off}", where.file, where.line or None, where.column)


def catalog_warnings(source: CatalogSource, compiled: Mapping[str, tuple[ScorerDefinition, ScorerPlan]]) -> list[ConfigError]:
    """The warnings of the scorers `source` defines itself (compiled clean), each once, in file order."""
    templates = PromptTemplates(source.templates_path)
    schemas: dict[Path, Any] = {}  # each schema file read once, however many steps answer with it
    found: dict[tuple[str | None, int | None, int | None, str], ConfigError] = {}
    for scorer_id in source.scorers:
        if scorer_id in compiled:
            lints = ScorerLints(compiled[scorer_id][0], source, templates, schemas)
            for warning in lints.run():
                found.setdefault((warning.path, warning.line, warning.column, warning.message), warning)
    return sorted(found.values(), key=lambda warning: (warning.path or "", warning.line or 0, warning.column or 0))


class ScorerLints:
    """The warnings of one scorer of `source` as written (`raw`, with places), compiled clean."""

    def __init__(self, definition: ScorerDefinition, source: CatalogSource, templates: PromptTemplates, schemas: dict[Path, Any]) -> None:
        self.definition = definition
        self.source = source
        self.raw = source.raw_definition(definition.id)
        self.templates = templates
        #: The schema files read so far, by path (shared by the scorers of one catalog).
        self.schemas = schemas
        self.fallback = source.path
        self.warnings: list[ConfigError] = []
        #: What the step being checked tests in its `skip_if`, known not to be 0 in its values.
        self.guards: list[set[str]] = []

    def warn(self, message: str, place: Place | None) -> None:
        self.warnings.append(ConfigError(message, *(place or (self.fallback, None, None))))

    def run(self) -> list[ConfigError]:
        self.divisions()
        self.enums()
        return self.warnings

    # -- divisions by a count

    def divisions(self) -> None:
        counts: set[str] = set()
        for index, step in enumerate(self.definition.steps):
            self.guards = []
            loc: list[Any] = ["steps", index]
            label = f"{self.definition.id}.{step.id}"
            if step.skip_if:
                self._division(step.skip_if, counts, [*loc, "skip_if"], f"{label}.skip_if")
                # what the step's skip_if tests is known not to be 0 in the rest of the step
                self.guards = [_reads(parsed)] if (parsed := _parsed(step.skip_if)) is not None else []
            written = step_kind(step.kind).sources(step)
            local: set[str] = set()  # its values known to be counts, as its own expressions read them
            for expression in written.expressions:
                self._division(expression.text, counts | local, [*loc, *expression.at], ".".join([label, *map(str, expression.at)]))
                value = next((value.text for value in written.values if value.at == expression.at), None)
                if value is not None and (parsed := _parsed(expression.text)) is not None and _is_count(parsed, counts | local):
                    local.add(value)
            counts |= {f"{step.id}.{name}" for name in local}  # as later steps read them

    def _division(self, source: str, counts: set[str], loc: list[Any], label: str) -> None:
        for division in unguarded_divisions(source, frozenset(counts), self.guards):
            span = span_of(self.raw, loc)
            place = position(self.raw, loc, value=True)
            if span is not None and division.divisor is not None:
                place = place_in(span, pattern=rf"/\s*\(?\s*({re.escape(division.divisor)})")
            self.warn(f"{label}: division by {division.divisor or 'a count'}, which is 0 for an empty list or text; guard it: {division.guard}", place)

    # -- enum values nobody explains

    def enums(self) -> None:
        compared = self._strings_compared()
        for step in self.definition.steps:
            kind = step_kind(step.kind)
            written = kind.sources(step)
            if written.schema is None or not written.templates:
                continue
            schema = self.source.schema_file(written.schema.text)
            if schema is None:
                continue
            prompt = self._prompt_text(kind.asks_judge, written)
            if prompt is None:
                continue
            if schema not in self.schemas:
                self.schemas[schema] = load_yaml(schema)
            for field, values in _enums(self.schemas[schema], []):
                for value, place in values:
                    if value in compared or re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", prompt, re.IGNORECASE):
                        continue
                    self.warn(
                        f"{self.definition.id}.{step.id}: the enum value {value!r} of {field} is never mentioned in the prompt "
                        f"{written.templates[0].text} and no expression compares with it: say in the prompt when the judge should answer it",
                        place,
                    )  # fmt: skip

    def _prompt_text(self, asks_judge: bool, written: StepSources) -> str | None:
        """The text of the step's templates, those they reach and its system message."""
        names = [template.text for template in written.templates]
        system = written.system.text if written.system is not None else self.definition.judge.system if asks_judge else None
        if system:
            names.append(system)
        texts = []
        try:
            for name in names:
                for reached in self.templates.referenced(name):
                    texts.append(self.templates.source(reached)[1])
        except (ConfigError, TemplateSyntaxError):
            return None
        return "\n".join(texts)

    def _strings_compared(self) -> set[str]:
        """Every string an expression or rule of the scorer writes."""
        sources: list[str] = []
        for step in self.definition.steps:
            written = step_kind(step.kind).sources(step)
            sources += [step.skip_if] if step.skip_if else []
            sources += [expression.text for expression in (*written.expressions, *written.rules)]
        found: set[str] = set()
        for source in sources:
            parsed = _parsed(source)
            if parsed is not None:
                found |= {node.value for node in [parsed, *parsed.find_all(nodes.Const)] if isinstance(node, nodes.Const) and isinstance(node.value, str)}
        return found


def _enums(schema: Any, path: list[str]) -> Iterator[tuple[str, list[tuple[str, Place | None]]]]:
    """Every string `enum` of a schema file as written: the field it belongs to, and each
    value with its place."""
    if isinstance(schema, LocatedDict):
        values = schema.get("enum")
        if isinstance(values, LocatedList) and all(isinstance(value, str) for value in values):
            yield ".".join(path) or "the answer", list(zip(values, values.item_places))
        for key, value in schema.items():
            if key == "properties" and isinstance(value, Mapping):
                for name, child in value.items():
                    yield from _enums(child, [*path, str(name)])
            elif key in ("$defs", "definitions") and isinstance(value, Mapping):
                for name, child in value.items():
                    yield from _enums(child, [str(name)])
            elif key in ("items", "anyOf"):
                yield from _enums(value, path)
    elif isinstance(schema, LocatedList):
        for child in schema:
            yield from _enums(child, path)


# -- thresholds on the score's scale


@functools.lru_cache(maxsize=1024)
def _reads_scale(source: str) -> bool:
    parsed = _parsed(source)
    return parsed is not None and any(
        node.attr == "scale" and isinstance(node.node, nodes.Name) and node.node.name == "options"
        for node in [parsed, *parsed.find_all(nodes.Getattr)]
        if isinstance(node, nodes.Getattr)
    )


def score_range(plan: ScorerPlan, options: Any) -> tuple[float, float] | None:
    """The range of a scorer's scores, 0 to its `scale` option, when its score is on that
    scale (its expression multiplies by `options.scale`, as every built-in's does); None when
    the score's range cannot be known (a count, a sum of an author's own)."""
    score = next((getattr(step, "score", None) for step in plan.steps if step_kind(step.kind).result_part == "score"), None)
    scale = options.get("scale") if isinstance(options, Mapping) else getattr(options, "scale", None)
    if not isinstance(scale, (int, float)) or isinstance(scale, bool) or not _reads_scale(str(getattr(score, "source", ""))):
        return None
    return 0.0, float(scale)


def threshold_off_scale(threshold: float | None, plan: ScorerPlan, options: Any) -> str | None:
    """Why `threshold` cannot be a pass line of the scorer's scores (say, 70 on a 0 to 1
    scale), or None when it can."""
    found = score_range(plan, options)
    if threshold is None or found is None or found[0] <= threshold <= found[1]:
        return None
    return f"{threshold:g} is outside the range of {plan.id}'s scores, {found[0]:g} to {found[1]:g} (the `scale` option)"

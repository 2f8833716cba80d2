"""What a scorer declares, checked against what its steps do, once they are compiled:

- its score against its scale: a score that reads `options.scale` runs from 0 to the scale,
  and the range its expression can take (found by the expression checks, from the bounds of
  the answers and options it reads) must fit (its settings on the score's scale, a
  threshold among them, are held to that range by setting_checks.py);
- its own options, each read by some template, expression or rule (else passing it changes
  nothing);
- its steps that ask a judge, each read by a later step (else its call is paid for nothing),
  its worked examples shown by the step's prompt, and its context read where it is declared;
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from jinja2 import TemplateSyntaxError, nodes
from pydantic import BaseModel

from ..errors import ConfigError
from ..scoring import ranges
from ..scoring.plan import StepPlan
from ..scoring.shapes import ANY, Number, Record, Shape
from ..scoring.steps import step_kind
from .findings import bare, loose_pattern, operator_symbol, written
from .schema_limits import subschemas
from .source import CatalogSource, Place, block_for_list, load_shared, place_in, position, span_of
from .step_reads import never_scored
from .spec import ScorerDefinition
from .templates import PromptTemplates, parse_expression

if TYPE_CHECKING:
    from .names import NameChecker


class Reporter(Protocol):
    """Where the checks put what they find (the catalog's compiler)."""

    source: CatalogSource
    templates: PromptTemplates
    uses: Uses
    problems: list[ConfigError]

    def problem(self, message: str, place: Place | None) -> None: ...

    def warning(self, code: str, message: str, place: Place | None) -> None: ...


#: The option a score on the scorer's scale reads (docs/authoring.md: "0 to `scale`").
SCALE = "options.scale"
#: Options the engine reads itself, whatever the steps read: every scorer's context, and the
#: scale (the default threshold is half of it).
_ENGINE_OPTIONS = {"context", "get_context", "scale"}
#: Where a pairwise scorer's steps read the second of the two outputs.
SECOND_OUTPUT = "metadata.second_output"
#: Filters that take a number and give one: bound to what is directly on their left only.
_NUMBER_FILTERS = {"abs", "round", "int", "float"}


@dataclass
class Uses:
    """What the scorer being compiled reads (every name and field, and the names read whole,
    such as `options` passed to a macro) and the score its steps give, with where each is."""

    paths: set[str] = field(default_factory=set)
    whole: set[str] = field(default_factory=set)
    at: dict[tuple[Any, ...], set[str]] = field(default_factory=dict)
    scores: list[tuple[Shape, list[Any]]] = field(default_factory=list)
    #: Each text compared with an enum that never holds it: what is compared, the text, and
    #: where the expression is (None for a rule's or a template's).
    enum_misses: list[tuple[str, str, tuple[Any, ...] | None]] = field(default_factory=list)
    #: Each comparison an option's default decides: the option, the comparison, the range of
    #: what it is compared with, and where the expression is.
    defaults_deciding: list[tuple[str, str, Number, tuple[Any, ...] | None]] = field(default_factory=list)
    #: Each option declared as text that a loop or a filter goes through as a list, and how.
    gone_through: dict[str, str] = field(default_factory=dict)

    def add(self, checker: NameChecker, at: tuple[Any, ...] | None = None) -> None:
        self.paths |= checker.paths_read
        self.whole |= checker.read_whole
        self.enum_misses += [(subject, text, at) for subject, text in getattr(checker, "enum_misses", ())]
        self.defaults_deciding += [(option, text, other, at) for option, text, other in getattr(checker, "defaults_deciding", ())]
        self.gone_through |= dict(getattr(checker, "options_gone_through", ()))
        if at is not None:
            self.at[at] = set(checker.paths_read)

    def reads_option(self, name: str) -> bool:
        return "options" in self.whole or any(path == f"options.{name}" or path.startswith(f"options.{name}.") for path in self.paths)


def scale_of(options_model: type[BaseModel]) -> float | None:
    """The default of the scorer's `scale` option, when it has a numeric one."""
    info = options_model.model_fields.get("scale")
    default = info.default if info is not None else None
    return float(default) if isinstance(default, (int, float)) and not isinstance(default, bool) and default > 0 else None


def numeric_defaults(options_model: type[BaseModel]) -> dict[str, float]:
    """The options' numeric defaults by path (`options.min_similarity`: 80), the scale left
    out (expressions read it at its default already)."""
    return {
        f"options.{name}": float(info.default) for name, info in options_model.model_fields.items()
        if name != "scale" and isinstance(info.default, (int, float)) and not isinstance(info.default, bool)
    }


def as_read(options_shape: Shape, scale: float | None) -> Shape:
    """The options as the steps' expressions and templates see them: the scale at its default
    (a score on the scale is checked against 0 to that default), and none of them taken for
    none: an option left without a default is for the caller to give (as option rules
    often demand), not a value that may be missing."""
    if not isinstance(options_shape, Record):
        return options_shape
    fields = {name: replace(shape, nullable=False) if shape is not ANY else shape for name, shape in options_shape.fields.items()}
    if scale is not None:
        fields["scale"] = replace(ranges.constant(scale), sources=frozenset({SCALE}))
    return replace(options_shape, fields=fields)


@dataclass(frozen=True)
class ScoreRange:
    """What the checks found of a scorer's scores: whether they are on its scale (0 to the
    `scale` option), and their range when it is known otherwise."""

    on_scale: bool
    span: tuple[float, float] | None


class Declarations:
    """The checks of one compiled scorer (its problems and warnings go to `compiler`)."""

    def __init__(self, compiler: Reporter, definition: ScorerDefinition, raw: Any, scale: float | None) -> None:
        self.compiler = compiler
        self.definition = definition
        self.raw = raw
        self.scale = scale
        self.uses = compiler.uses
        self.label = f"scorers.{definition.id}"

    def place(self, loc: Sequence[Any], value: bool = True) -> Place | None:
        return position(self.raw, list(loc), value=value)

    # -- the score and its scale

    def score_range(self) -> ScoreRange:
        """The score against the scale, each score a step gives (its expression, what a skipped
        step gives) checked at its place."""
        on_scale = self.scale is not None and any(SCALE in self.uses.at.get(tuple(loc), ()) for _, loc in self.uses.scores)
        numbers = [(ranges.as_number(shape), loc) for shape, loc in self.uses.scores]
        for number, loc in numbers:
            if number is not None and number.bounded and self.scale is not None and not (0 <= number.low and number.high <= self.scale):
                self.off_scale(number, loc, on_scale)
        known = [number for number, _ in numbers if number is not None and number.bounded]
        if on_scale or not known or len(known) < len(numbers):
            return ScoreRange(on_scale, None)
        return ScoreRange(False, (min(number.low for number in known), max(number.high for number in known)))

    def off_scale(self, number: Number, loc: Sequence[Any], on_scale: bool) -> None:
        """A score whose range leaves the scale: refused when it reads the scale, a warning when
        it never does; said only when the ends of its range are values it takes (a range found
        from values read together is a bound, and what they allow together may fit)."""
        assert self.scale is not None
        if not number.tight:
            return
        where = ".".join(map(str, [self.definition.id, *self._step_label(loc)]))
        skipped = loc[-1] == "on_skip"
        what = f"the score when the step is skipped is {number.span()}" if skipped else f"the score can be {number.span()}"
        scale = f"0 to {self.scale:g} (`options.scale`)"
        hint, place = self._binding_hint(loc)
        if on_scale:
            self.compiler.problem(f"{where}: {what}, outside the scale of the scores, {scale}{hint}", place)
            self.bounds_described_otherwise(what)
            return
        self.compiler.warning(
            "score-off-scale",
            f"{where}: {what}, but the scorer's scale is {scale}, which the score never reads: "
            f"bring it to 0..1 and multiply by options.scale, or drop the option (`scale: null` under options){hint}",
            place,
        )

    def _step_label(self, loc: Sequence[Any]) -> list[Any]:
        index = loc[1] if len(loc) > 1 and loc[0] == "steps" and isinstance(loc[1], int) else None
        if index is None or index >= len(self.definition.steps):
            return list(loc)
        return [self.definition.steps[index].id, *loc[2:]]

    def bounds_described_otherwise(self, what: str) -> None:
        """A number of an answer this scorer's steps give, in the author's own schema, whose
        minimum or maximum its own description contradicts (`maximum: 10` beside "From 1 (...)
        to 5 (...)"): the score, written for the described range, leaves the scale, and the
        bound is the line to change."""
        from .proving.meanings import bounds_described_otherwise
        from .proving.properties import schema_paths

        own = self.compiler.source.schemas_path[0].resolve()
        for _, path in schema_paths(self.compiler.source, self.definition):
            if not path.resolve().is_relative_to(own):
                continue
            for answer_field, ends, described, place in bounds_described_otherwise(path):
                self.compiler.problem(
                    f"{answer_field}: runs from {ends[0]:g} to {ends[1]:g} by its minimum and maximum, but its own description says from "
                    f"{described[0]:g} to {described[1]:g}, and {self.definition.id}'s score, written for that, {what.removeprefix('the score ')}, "
                    f"outside its scale: make the bounds and the description agree",
                    place,
                )

    def _binding_hint(self, loc: Sequence[Any]) -> tuple[str, Place | None]:
        """When the expression applies a number filter to the right of an operator, how Jinja
        reads it, placed at the operand the filter takes (the place to put a bracket); else
        nothing to add, at the expression."""
        span = span_of(self.raw, list(loc))
        source = self._value(loc)
        if not isinstance(source, str) or span is None:
            return "", self.place(loc)
        try:
            parsed = parse_expression(source)
        except TemplateSyntaxError:
            return "", self.place(loc)
        for node in [parsed, *parsed.find_all(nodes.BinExpr)]:
            if isinstance(node, nodes.BinExpr) and isinstance(node.right, nodes.Filter) and node.right.name in _NUMBER_FILTERS and node.right.node is not None:
                taken, filtered = written(node.right.node), node.right.name
                # What the author most likely meant it to take: the operation ending just before it.
                before = node.left.right if isinstance(node.left, nodes.BinExpr) else node.left
                meant = f"({bare(written(before) or '...')} {operator_symbol(node)} {taken}) | {filtered}"
                if taken:
                    operand = rf"({loose_pattern(bare(taken))})\)?\s*\|\s*{filtered}\b"
                    return (
                        f"; `| {filtered}` takes only what is directly on its left, `{bare(taken)}`: put brackets around what it should take, e.g. `{meant}`",
                        place_in(span, pattern=operand),
                    )
        return "", self.place(loc)

    def _value(self, loc: Sequence[Any]) -> Any:
        node = self.raw
        for part in loc:
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                return None
        return node

    # -- what a pairwise scorer shows

    def second_output_shown(self, steps: Sequence[StepPlan | None]) -> None:
        """A pairwise scorer that never reads the item's metadata, where the second output is:
        it compares the first with itself. Named at the prompt's second `output`, when it shows
        the first twice, else at the step's `prompt:`."""
        if not self.definition.pairwise:
            return
        # Read somewhere (by its field, or by a key known only at run time): only a prompt that
        # prints the first output twice, and never the metadata, is then a mistake.
        metadata_read = any(path == "metadata" or path.startswith("metadata.") for path in self.uses.paths | self.uses.whole)
        plans = {step.id: step for step in steps if step is not None}
        for index, spec in enumerate(self.definition.steps):
            kind = step_kind(spec.kind)
            prompt = kind.sources(spec).templates[:1]
            if spec.id not in plans or not kind.asks_judge or kind.result_part is not None or not prompt:
                continue
            path, source = self.compiler.templates.source(prompt[0].text)
            try:
                printed = list(self.compiler.templates.environment.parse(source).find_all(nodes.Output))
            except TemplateSyntaxError:
                continue
            shown = sorted({name.lineno for output in printed for name in output.find_all(nodes.Name) if name.name == "output"})
            second = sorted({
                node.lineno for output in printed for node in output.find_all(nodes.Getattr)
                if node.attr == "second_output" and isinstance(node.node, nodes.Name) and node.node.name == "metadata"
            })
            if shown and second and second[0] < shown[0] and path.resolve().is_relative_to(self.compiler.source.templates_path[0].resolve()):
                self.compiler.warning(
                    "pairwise-order",
                    f"{self.definition.id}.{spec.id}: the scorer is pairwise, and its score counts `output` as the first response, but the prompt "
                    f"shows `{SECOND_OUTPUT}` first (line {second[0]}) and `output` after it (line {shown[0]}): the judge's first response is the "
                    "second output, so each preference counts for the other side; show `output` first",
                    Place(str(path), second[0], 1),
                )
            if metadata_read and (len(shown) < 2 or "metadata" in source):
                continue
            twice = f"it shows `output`, the first, a second time (first at line {shown[0]}), and never" if len(shown) > 1 else "it never shows"
            message = (
                f"{self.definition.id}.{spec.id}: the scorer is pairwise, but {twice} the second output, `{SECOND_OUTPUT}`: "
                f"the judge compares the first output with itself; show the second as `{{{{ {SECOND_OUTPUT} | untrusted(\"response_2\") }}}}`"
            )
            if len(shown) > 1:
                column = re.search(r"\boutput\b", source.splitlines()[shown[1] - 1])
                self.compiler.problems.append(ConfigError(message, path, shown[1], column.start() + 1 if column else None))
            else:
                self.compiler.problem(message, self.place(["steps", index, *prompt[0].at]))

    # -- declarations nothing reads (the scorer's own: written in this catalog)

    def option_enums(self) -> None:
        """An option's `enum:` that lacks a value its expressions compare it with, when the
        scorer's or the option's description names that value too: the expressions and the
        description agree, so the enum is the odd one out (a value misspelt or in another
        case), and is named at its line beside the comparison's own problem."""
        own = self.compiler.source.scorers.get(self.definition.id)
        options = own.get("options") if isinstance(own, Mapping) else None
        for name, declared in options.items() if isinstance(options, Mapping) else ():
            values = declared.get("enum") if isinstance(declared, Mapping) else None
            if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
                continue
            described = f"{self.definition.description or ''} {declared.get('description') or ''}"
            for subject, text, at in self.uses.enum_misses:
                if subject != f"options.{name}" or text in values or not _names_word(described, text):
                    continue
                compared = position(self.raw, list(at), value=True) if at is not None else None
                where = f" (line {compared.line})" if compared is not None and compared.line else ""
                shown = ", ".join(map(repr, values))
                self.compiler.problem(
                    f"{self.label}.options.{name}.enum: ({shown}) has no {text!r}, which the scorer's expressions compare "
                    f"`options.{name}` with{where} and its description names: is a value of the enum misspelt?",
                    position(own, ["options", name, "enum"], value=True),
                )
                break

    def answer_enums(self) -> None:
        """An answer field's `enum:`, in the author's own schema, that lacks a value the score
        looks up or compares the field with while the scorer's description names that value
        too (a "borderline" label scored 0.5 and described, left out of the labels the judge may
        give): the score and the description agree, so the enum is the odd one out, and is
        named at its line beside the expression's own problem."""
        for subject, text, at in self.uses.enum_misses:
            step_id, _, field_name = subject.partition(".")
            spec = next((spec for spec in self.definition.steps if spec.id == step_id), None)
            written = step_kind(spec.kind).sources(spec).schema if spec is not None else None
            path = self.compiler.source.schema_file(written.text) if written is not None else None
            if written is None or path is None or "." in field_name or not _names_word(self.definition.description or "", text):
                continue
            if not path.resolve().is_relative_to(self.compiler.source.schemas_path[0].resolve()):
                continue  # a built-in schema: the author's own expression is the one to change
            node = next((node for name, node in subschemas(load_shared(path), []) if name == field_name), None)
            values = node.get("enum") if node is not None else None
            if not isinstance(values, list) or text in values:
                continue
            compared = position(self.raw, list(at), value=True) if at is not None else None
            where = f" (line {compared.line})" if compared is not None and compared.line else ""
            self.compiler.problem(
                f"{self.label}.{subject}: the enum of {field_name} in {written.text} ({', '.join(map(repr, values))}) has no {text!r}, which the "
                f"score reads{where} and the scorer's description names: the judge can never answer it; add it to the enum (and to `meaning:`)",
                position(node, ["enum"], value=True),
            )

    def own_options(self, steps: Sequence[StepPlan | None]) -> None:
        """What is wrong with the options the author's file declares."""
        self.unused(steps)
        self.option_enums()
        self.answer_enums()
        self.defaults_in_another_unit()
        self.texts_gone_through()

    def texts_gone_through(self) -> None:
        """An option the author's file declares `type: string` that a template or expression
        goes through as a list (said at the loop too): either line may be the slip, and the
        declaration is the one to change when the option holds several things."""
        own = self.compiler.source.scorers.get(self.definition.id)
        options = own.get("options") if isinstance(own, Mapping) else None
        for option, how in self.uses.gone_through.items():
            declared = options.get(option.removeprefix("options.")) if isinstance(options, Mapping) else None
            if not isinstance(declared, Mapping) or declared.get("type") != "string":
                continue
            self.compiler.problem(
                f"{self.label}.{option}.type: string, but {how} goes through `{option}` as a list, one character at a time, "
                f"taking each character for an item; declare it `type: array` with `items: {{type: string}}` (and a list as its default)",
                position(own, [*option.split("."), "type"], value=True),
            )

    def defaults_in_another_unit(self) -> None:
        """An option's default, written in the author's file, that decides a comparison for
        every item (`constant-at-default`, said at the comparison): the default is the other
        end of the mismatch, and most often the one to change (85 where a share was meant)."""
        own = self.compiler.source.scorers.get(self.definition.id)
        options = own.get("options") if isinstance(own, Mapping) else None
        said: set[str] = set()
        for option, text, other, at in self.uses.defaults_deciding:
            name = option.removeprefix("options.")
            declared = options.get(name) if isinstance(options, Mapping) else None
            loc = ["options", name, "default"] if isinstance(declared, Mapping) else ["options", name]
            default = declared.get("default") if isinstance(declared, Mapping) else declared
            if option in said or not isinstance(default, (int, float)) or isinstance(default, bool):
                continue
            said.add(option)
            compared = position(self.raw, list(at), value=True) if at is not None else None
            where = f" (line {compared.line})" if compared is not None and compared.line else ""
            share = f" (a percent where a share is meant: write {default / 100:g})" if 0 <= other.low and other.high <= 1 < default <= 100 else ""
            self.compiler.warning(
                "constant-at-default",
                f"{self.label}.{'.'.join(loc)}: {default:g} decides `{text}`{where} the same way for every item: what it is compared with "
                f"is {other.span()}, and {default:g} is at or beyond an end of it; is the default in another unit{share}?",
                position(own, loc, value=True),
            )

    def unused(self, steps: Sequence[StepPlan | None]) -> None:
        own = self.compiler.source.scorers.get(self.definition.id)
        options = own.get("options") if isinstance(own, Mapping) else None
        for name in options if isinstance(options, Mapping) else {}:
            assert isinstance(options, Mapping)
            if options[name] is None or name in _ENGINE_OPTIONS or self.uses.reads_option(str(name)):
                continue
            self.compiler.warning(
                "unused-option",
                f"{self.label}.options.{name}: no template, expression or rule reads `options.{name}`, so passing it changes nothing: "
                f"show it in a prompt (`{{{{ options.{name} }}}}`) or use it in an expression, or remove it",
                position(own, ["options", name]),
            )
        plans = [step for step in steps if step is not None]
        unscored = never_scored(plans)
        for index, spec in enumerate(self.definition.steps):
            plan = next((step for step in plans if step.id == spec.id), None)
            if plan is None:
                continue
            kind = step_kind(spec.kind)
            label = f"{self.definition.id}.{spec.id}"
            later = plans[plans.index(plan) + 1 :]
            if kind.asks_judge and kind.result_part is None and plan in unscored:
                message = (
                    f"{label}: only the reason shows {spec.id!r}, and no step toward the score reads it, so its judge call changes no score: "
                    f"read its answer in the score, or remove the step"
                ) if any(plan.provides() & step.reads for step in later) else (
                    f"{label}: no later step reads {spec.id!r}, so its judge call is paid for nothing: read its answer in the score (or a prompt), or remove the step"
                )
                self.compiler.warning(
                    "unread-answer",
                    message,
                    self.place(["steps", index, "id"]),
                )
            examples = getattr(spec, kind.examples_key, None) if kind.examples_key else None
            if examples and "examples" not in plan.reads:
                written_sources = kind.sources(spec)
                template = written_sources.templates[0].text if written_sources.templates else "its template"
                self.compiler.warning(
                    "examples-not-shown",
                    f"{label}.{kind.examples_key}: the step's prompt never shows its worked examples: put `{{% include \"partials/examples.j2\" %}}` in {template}",
                    self.place(["steps", index, kind.examples_key], value=False),
                )
            if plan.uses_context and "context" not in plan.reads:
                self.compiler.warning(
                    "unread-context",
                    f"{label}: the step declares that it uses the context, but nothing in it reads `context`: the context is fetched for it "
                    "(get_context called) for nothing; show it in the prompt, or drop the declaration",
                    self.place(["steps", index, "id"]),
                )


def _names_word(text: str, word: str) -> bool:
    """Whether `text` has `word` as a word of its own (`strict:` names strict; `strictly` does not)."""
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def default_refused(definition: ScorerDefinition, raw: Any, error: Mapping[str, Any], fallback: Path) -> ConfigError:
    """The problem of an option's default that its declaration refuses (`error`, pydantic's
    first), at the default; at the `enum:` when the scorer's or the option's description
    names the default as written: the default and the description agree, so the enum is the
    odd one out."""
    loc = list(error.get("loc") or ())
    declared = raw.get("options", {}).get(loc[0]) if len(loc) == 1 and isinstance(raw.get("options"), Mapping) else None
    default = error.get("input")
    values = declared.get("enum") if isinstance(declared, Mapping) else None
    if error.get("type") == "literal_error" and isinstance(values, list) and isinstance(default, str) and default not in values:
        assert isinstance(declared, Mapping)
        if _names_word(f"{definition.description or ''} {declared.get('description') or ''}", default):
            place = position(raw, ["options", loc[0], "enum"], value=True)
            return ConfigError(
                f"scorers.{definition.id}.options.{loc[0]}.enum: ({', '.join(map(repr, values))}) has no {default!r}, which its default and the "
                "description name: is a value of the enum misspelt?",
                *(place or (fallback, None, None)),
            )
    place = position(raw, ["options", *error["loc"], "default"], value=True)
    may_be_null = '; an option that may be null is written `type: [TYPE, "null"]`' if error.get("input", ...) is None else ""
    block = block_for_list(raw, ["options", *error["loc"], "default"], error["type"])
    return ConfigError(
        f"scorers.{definition.id}.options.{'.'.join(map(str, error['loc']))}.default: {error['msg']}{may_be_null}{block}",
        *(place or (fallback, None, None)),
    )

"""Warnings about a scorer that loads and runs but may not do what its author meant, worked
out when asked (`scorers check`, the workbench), not at every load: an enum value of an
answer schema that the step's prompt never mentions and no expression compares with (the
judge is never told when to give it, and nothing reads it). The checks found while
compiling are in names.py, template_flow.py and declarations.py.

Each warning is a CatalogWarning placed at the text to change, so it reads like a problem.
(A threshold outside the range of a scorer's scores is refused by the plan itself:
`ScorerPlan.threshold_off_scale`.)
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from jinja2 import TemplateSyntaxError, nodes

from ..errors import ConfigError
from ..scoring.plan import ScorerPlan
from ..scoring.shapes import Scope
from ..scoring.steps import StepSources, step_kind
from .findings import bare, written
from .literal_text import control_characters, country_codes, typographic_quotes, escapes_in_expressions, partials_of_another_locale, wrong_codes
from .option_text import tools_named_otherwise, described_values_refused, entries_described_alike, fields_described_alike, exclusive_ends_against_description, option_words_against_comments, order_against_description, keeping_options_passed_to_removing_flags, list_bounds_against_description, text_options_as_lists, whole_numbers_for_parts, whole_numbers_in_answers
from .pattern_text import anchor_on_one_alternative, anchored_at_both_ends, anchored_to_the_whole_text, doubled_escapes
from .required_fields import read_but_not_required, required_dropped, unread_required
from .quantity_units import counts_in_other_units, rates_turned_round
from .template_shows import answered_list_unshown, bounded_by_unshown, list_in_its_own_loop, one_piece_shown, part_of_a_counted_list, scale_told, shared_trees, text_cut_short
from .value_names import direction_against_description, names_against_filters, reducers_against_description
from .expression_words import abs_of_the_last_operand, whole_division_of_counts, extreme_said_none_kept, picked_in_a_ratio_where, branch_off_the_scale, ends_against_names, extremes_against_words, more_than_one_for_at_least_one, ranks_counted_from_zero, roles_against_names, strict_where_inclusive, weights_against_description, weights_crossed
from .prompt_answers import prompt_asks
from .template_labels import labels_against_fields, swapped_headings, tags_against_fields, turns_under_one_role
from .warning import CatalogWarning
from .schema_limits import subschemas
from .silencing import silenced
from .setting_checks import file_lines
from .step_reads import values_copied
from .flag_words import flags_against_words
from .rating_texts import ratings_against_range
from .yaml_surprises import surprises_in
from .source import CatalogSource, LocatedList, Place, load_shared, position
from .spec import ScorerDefinition
from .templates import PromptTemplates, parse_expression, sandbox

_environment = sandbox()


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
            return f"; when {bare(divisor)} can be 0, guard the division: `{bare(whole)} if {bare(divisor)} else 0`"
    return ""


def catalog_warnings(source: CatalogSource, compiled: Mapping[str, tuple[ScorerDefinition, ScorerPlan]], found: Sequence[ConfigError] = ()) -> list[ConfigError]:
    """The warnings of the catalog: `found` while compiling it, and those of the scorers
    `source` defines itself (compiled clean); each once, in file order, without those an
    author silenced at their line."""
    templates = PromptTemplates(source.templates_path)
    schemas: dict[Path, Any] = {}  # each schema file read once, however many steps answer with it
    unique: dict[tuple[str | None, int | None, int | None, str], ConfigError] = {}
    builtin = [place.resolve() for place in (source.fallback.path, *source.fallback.templates_path[:1], *source.fallback.schemas_path[:1])] if source.fallback else []
    for warning in found:
        # The built-in scorers a host catalog offers as they are: their files are not the host's to change.
        if warning.path is None or not any(Path(warning.path).resolve().is_relative_to(place) for place in builtin):
            unique.setdefault(_place_and_kind(warning), warning)
    files = {source.path}
    for scorer_id in source.scorers:
        if scorer_id in compiled:
            lints = ScorerLints(*compiled[scorer_id], source, templates, schemas)
            for warning in lints.run():
                unique.setdefault(_place_and_kind(warning), warning)
            files |= lints.schema_files()
    for warning in yaml_warnings(files):
        unique.setdefault(_place_and_kind(warning), warning)
    for path in files:
        if not any(path.resolve().is_relative_to(place) for place in builtin):
            for warning in control_characters(source.data if path == source.path else load_shared(path)):
                unique.setdefault(_place_and_kind(warning), warning)
    kept = [warning for warning in unique.values() if not silenced(warning)]
    return sorted(kept, key=lambda warning: (warning.path or "", warning.line or 0, warning.column or 0))


def _counted(step: Any) -> frozenset[str]:
    """The lists a step's bounds ask one answer per item of (`items: "preprocess.claims |
    length"`, `enum: preprocess.claims`)."""
    written = getattr(step, "bounds", None) or {}
    texts = [bound for field in written.values() for bound in (getattr(field, "items", None), getattr(field, "enum", None)) if isinstance(bound, str)]
    return frozenset(found[1] for text in texts if (found := re.fullmatch(r"\s*([A-Za-z_][\w.]*)\s*(?:\|\s*length\s*)?", text)))


def _bounded_by(step: Any) -> frozenset[str]:
    """The names a step's bounds read (the item's texts among them)."""
    written = getattr(step, "bounds", None) or {}
    parsed = [_parsed(bound) for field in written.values() for bound in field.model_dump(exclude_none=True).values() if isinstance(bound, str)]
    return frozenset(name.name for tree in parsed if tree is not None for name in [tree, *tree.find_all(nodes.Name)] if isinstance(name, nodes.Name))


def _place_and_kind(warning: ConfigError) -> tuple[str | None, int | None, int | None, str]:
    """What makes a warning one: a shared template's warning is found for every step that
    renders it, and is one warning (an enum's value is one per value: its message says which)."""
    code = getattr(warning, "code", None)
    return warning.path, warning.line, warning.column, code if code and code != "unexplained-enum" else warning.message


class ScorerLints:
    """The warnings of one scorer of `source` as written (`raw`, with places), compiled clean."""

    def __init__(self, definition: ScorerDefinition, plan: ScorerPlan, source: CatalogSource, templates: PromptTemplates, schemas: dict[Path, Any]) -> None:
        self.definition = definition
        self.plan = plan
        self.source = source
        self.raw = source.raw_definition(definition.id)
        self.templates = templates
        #: The schema files read so far, by path (shared by the scorers of one catalog).
        self.schemas = schemas
        self.fallback = source.path
        self.warnings: list[ConfigError] = []

    def warn(self, code: str, message: str, place: Place | None) -> None:
        file, line, column = place or (str(self.fallback), None, None)
        self.warnings.append(CatalogWarning(message, file, line, column, code=code))

    def run(self) -> list[ConfigError]:
        self.enums()
        self.asked()
        self.labels()
        if self.source.fallback is not None:  # the built-in catalog's codes are held by tests/test_literal_text.py
            for code, message, place in wrong_codes(self.raw, self.source.scorers.get(self.definition.id), f"scorers.{self.definition.id}"):
                self.warn(code, message, place)
            own = self.source.scorers.get(self.definition.id)
            base = self._base(own)
            for code, message, place in [*escapes_in_expressions(self.raw, f"scorers.{self.definition.id}"), *country_codes(own, f"scorers.{self.definition.id}")]:
                self.warn(code, message, place)
            self.warnings += partials_of_another_locale(self.templates, self.own_prompts())
            self.warnings += unread_required(self.definition, self.raw, own, self.templates, self.source.templates_path[0], self.definition.id)
            reads = frozenset().union(*(step.reads for step in self.plan.steps))
            self.warnings += required_dropped(reads, own, base, f"scorers.{self.definition.id}")
            if not (isinstance(own, Mapping) and own.get("extends")):
                self.warnings += read_but_not_required(reads, own, f"scorers.{self.definition.id}")
            for code, message, place in [*doubled_escapes(self.raw, own, f"scorers.{self.definition.id}"), *anchored_to_the_whole_text(self.raw, own, f"scorers.{self.definition.id}"), *anchored_at_both_ends(self.raw, own, f"scorers.{self.definition.id}"), *anchor_on_one_alternative(self.raw, own, f"scorers.{self.definition.id}"), *text_options_as_lists(self.raw, own, f"scorers.{self.definition.id}"),
                                       *whole_numbers_for_parts(own, f"scorers.{self.definition.id}"),
                                       *entries_described_alike(own, f"scorers.{self.definition.id}"),
                                       *option_words_against_comments(own, base, f"scorers.{self.definition.id}"),
                                       *flags_against_words(own, base, f"scorers.{self.definition.id}"),
                                       *typographic_quotes(own, base, f"scorers.{self.definition.id}"),
                                       *tools_named_otherwise(own, "\n".join(file_lines(str(self.source.path))), f"scorers.{self.definition.id}"),
                                       *order_against_description(own, base, f"scorers.{self.definition.id}"),
                                       *keeping_options_passed_to_removing_flags(self.raw, own, f"scorers.{self.definition.id}"),
                                       *names_against_filters(self.raw, f"scorers.{self.definition.id}"),
                                       *reducers_against_description(self.raw, f"scorers.{self.definition.id}"),
                                       *direction_against_description(own, f"scorers.{self.definition.id}"),
                                       *extremes_against_words(self.raw, own, f"scorers.{self.definition.id}"),
                                       *extreme_said_none_kept(self.raw, own, f"scorers.{self.definition.id}"),
                                       *ranks_counted_from_zero(self.raw, own, f"scorers.{self.definition.id}"),
                                       *ends_against_names(self.raw, f"scorers.{self.definition.id}"),
                                       *branch_off_the_scale(self.raw, f"scorers.{self.definition.id}"),
                                       *abs_of_the_last_operand(self.raw, f"scorers.{self.definition.id}"),
                                       *whole_division_of_counts(self.raw, f"scorers.{self.definition.id}"),
                                       *picked_in_a_ratio_where(self.raw, f"scorers.{self.definition.id}"),
                                       *weights_crossed(self.raw, f"scorers.{self.definition.id}"),
                                       *roles_against_names(self.raw, f"scorers.{self.definition.id}"),
                                       *strict_where_inclusive(self.raw, own, f"scorers.{self.definition.id}"),
                                       *weights_against_description(self.raw, own, f"scorers.{self.definition.id}"),
                                       *more_than_one_for_at_least_one(self.raw, own, f"scorers.{self.definition.id}"),
                                       *counts_in_other_units(self.raw, self.definition.options, f"scorers.{self.definition.id}"),
                                       *rates_turned_round(self.raw, self.definition.options, f"scorers.{self.definition.id}"),
                                       *ratings_against_range(self.definition, own, f"scorers.{self.definition.id}"),
                                       *values_copied(self.plan.steps, self.raw, f"scorers.{self.definition.id}"),
                                       *self.own_schemas_against_their_words()]:
                self.warn(code, message, place)
        return self.warnings

    def _base(self, own: Any) -> Any:
        """The mapping of the scorer `own` extends, with `extends` applied (None for none)."""
        base = own.get("extends") if isinstance(own, Mapping) else None
        try:
            return self.source.raw_definition(str(base)) if base and base != self.definition.id else self.source.fallback.resolved().get(str(base)) if base and self.source.fallback else None
        except ConfigError:
            return None

    def own_schemas_against_their_words(self) -> Iterator[tuple[str, str, Place | None]]:
        """What the answer schemas in the author's own folder declare against their own words."""
        own = self.source.schemas_path[0].resolve()
        for path in sorted(self.schema_files()):
            if path.resolve().is_relative_to(own):
                schema = self.schemas.setdefault(path, load_shared(path))
                yield from whole_numbers_in_answers(schema, path.name)
                yield from list_bounds_against_description(schema, path.name)
                yield from exclusive_ends_against_description(schema, path.name)
                yield from described_values_refused(schema, path.name)
                yield from fields_described_alike(schema, path.name)

    def own_prompts(self) -> list[str]:
        """The prompt files of the scorer's steps in the author's own folder."""
        own = self.source.templates_path[0].resolve()
        names = dict.fromkeys(template.text for step in self.definition.steps for template in step_kind(step.kind).sources(step).templates)
        return [name for name, path in ((name, self._found(name)) for name in names) if path is not None and path.resolve().is_relative_to(own)]

    def _found(self, name: str) -> Path | None:
        try:
            return self.templates.path_of(name)
        except ConfigError:
            return None

    def schema_files(self) -> set[Path]:
        """The schema files the scorer's steps answer with."""
        found = set()
        for step in self.definition.steps:
            schema = step_kind(step.kind).sources(step).schema
            path = self.source.schema_file(schema.text) if schema is not None else None
            if path is not None:
                found.add(path)
        return found

    # -- what the prompt asks against what the schema accepts

    def asked(self) -> None:
        for step in self.definition.steps:
            kind = step_kind(step.kind)
            written = kind.sources(step)
            named = written.schema.text if written.schema is not None and kind.asks_judge else None
            schema = self.source.schema_file(named) if named is not None else None
            if named is None or schema is None or not written.templates:
                continue
            if schema not in self.schemas:
                self.schemas[schema] = load_shared(schema)
            names = [template.text for template in written.templates]
            trees, own, label = shared_trees(self.templates, names), self.source.templates_path[0], f"{self.definition.id}.{step.id}"
            self.warnings += one_piece_shown(trees, own, label)
            self.warnings += list_in_its_own_loop(trees, own, label)
            counted = _counted(step)
            self.warnings += part_of_a_counted_list(trees, own, counted, label)
            self.warnings += scale_told(trees, own, self._top(), self.plan.on_scale, label)
            self.warnings += bounded_by_unshown(trees, own, _bounded_by(step), label)
            self.warnings += text_cut_short(trees, own, label)
            self.warnings += answered_list_unshown(trees, own, counted, label)
            self.warnings += swapped_headings(self.templates, self.source.templates_path[0], names, self.definition.options, f"{self.definition.id}.{step.id}")
            self.warnings += prompt_asks(self.templates, self.source.templates_path[0], names, self.schemas[schema], named, f"{self.definition.id}.{step.id}")

    def _top(self) -> float | None:
        """The most the scorer's scores reach with its default options."""
        scale = self.definition.options.get("scale")
        found = self.plan.scores_range({"scale": scale.get("default") if isinstance(scale, Mapping) else None})
        return found[1] if found is not None else None

    # -- a label over another field of the item

    def labels(self) -> None:
        own = self.source.templates_path[0].resolve()
        names = [template.text for step in self.definition.steps for template in step_kind(step.kind).sources(step).templates]
        try:
            reached = dict.fromkeys(reached for name in names for reached in self.templates.referenced(name))
        except (ConfigError, TemplateSyntaxError):
            return  # reported by the compiler
        for name in reached:
            path, text = self.templates.source(name)
            if path.resolve().is_relative_to(own):
                labelled = list(labels_against_fields(path, text))
                # A tag naming another field, on a line no label above has named already.
                tagged = [(message, place) for message, place in tags_against_fields(path, text) if all(place.line != other.line for _, other in labelled)]
                for message, place in [*labelled, *tagged]:
                    self.warn("label-shows-other-field", f"{self.definition.id}: {message}", place)
                for message, place in turns_under_one_role(path, text, self.templates.environment.parse(text)):
                    self.warn("turns-under-one-role", f"{self.definition.id}: {message}", place)

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
                self.schemas[schema] = load_shared(schema)
            for field, values in _enums(self.schemas[schema], []):
                for value, place in values:
                    if value in compared or re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", prompt, re.IGNORECASE):
                        continue
                    self.warn(
                        "unexplained-enum",
                        f"{self.definition.id}.{step.id}: the enum value {value!r} of {field} is never mentioned in the prompt "
                        f"{written.templates[0].text} and no expression compares with it: say in the prompt when the judge should answer it",
                        place,
                    )

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
    for field, node in subschemas(schema, path):
        values = node.get("enum")
        if isinstance(values, LocatedList) and all(isinstance(value, str) for value in values):
            yield field or "the answer", list(zip(values, values.item_places))


def yaml_warnings(files: set[Path]) -> list[ConfigError]:
    """The numbers of these YAML files that YAML reads otherwise than they look (`010`, `1:30`)."""
    return [
        CatalogWarning(found.explained(), str(path), found.line, found.column, code="yaml-number")
        for path in files
        for found in surprises_in(str(path))
        if found.silent
    ]

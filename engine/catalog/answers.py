"""Schema files (JSON Schema written in YAML) compiled to Pydantic models, once, at load time.

The models are what Instructor validates the judge's answers against, so everything that
makes an answer acceptable lives here:
- enum values are normalised before validation (`"Yes"`, `" NO "` count as `yes` / `no`);
- `rules:` at the top of a schema file (or on a step) are checks that may span steps, e.g.
  "as many verdicts as claims" (answer_rules.py). A broken rule is a validation error, so
  the judge is asked again with the rule's message.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple, Optional

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    create_model,
)
from pydantic_core import SchemaError

from ..errors import ConfigError
from ..scoring.plan import ScorerPlan
from ..scoring.steps import step_kind
from .answer_rules import CompiledRule, compile_rules
from .source import CatalogSource, load_shared, position
from .spec import Rule, ScorerDefinition
from .suggest import did_you_mean

_SCALAR_TYPES: dict[str, type] = {"string": str, "number": float, "integer": int, "boolean": bool}
_ANNOTATION_KEYWORDS = {"title", "description", "examples", "default", "$comment"}
_KEYWORDS_BY_TYPE: dict[str, set[str]] = {
    "object": {"properties", "required", "additionalProperties"},
    "array": {"items", "minItems", "maxItems"},
    "string": {"enum", "minLength", "maxLength", "pattern", "meaning"},
    "number": {"enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "meaning"},
    "integer": {"enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "meaning"},
    "boolean": {"meaning"},
}
#: Bounds every answer's strings and lists get unless their schema sets its own: a judge
#: decoding under a JSON grammar (llama.cpp, vLLM) that starts repeating itself inside a
#: string or a list is stopped by them, instead of generating until max_tokens. They are in
#: the JSON schema sent to the judge and enforced when the answer is validated. A paragraph
#: of text (about 250 tokens) is room for any reason or explanation, and several such strings
#: still fit in the default max_tokens of a step (2048).
DEFAULT_MAX_LENGTH = 1000
DEFAULT_MAX_ITEMS = 100

_CONSTRAINTS = {
    "minimum": "ge",
    "maximum": "le",
    "exclusiveMinimum": "gt",
    "exclusiveMaximum": "lt",
    "minItems": "min_length",
    "maxItems": "max_length",
    "minLength": "min_length",
    "maxLength": "max_length",
    "pattern": "pattern",
}

def _normalise_enum(canonical: Mapping[str, Any]) -> Any:
    def normalise(value: Any) -> Any:
        if isinstance(value, str):
            return canonical.get(value.strip().casefold(), value)
        return value

    return normalise


def _model_name(text: str) -> str:
    words = re.findall(r"[A-Za-z0-9]+", text)
    name = "".join(word[:1].upper() + word[1:] for word in words) or "Answer"
    return name if name[0].isalpha() else f"M{name}"


class SchemaCompiler:
    """Compiles one schema file; errors name the file and the line of the offending key."""

    def __init__(self, data: Any, path: Path, bounded: bool = False) -> None:
        self.data = data
        self.path = path
        #: An answer schema: strings and lists without bounds of their own get the defaults.
        self.bounded = bounded
        #: Where the defaults were given: the field's place in `data`, and the bound.
        self.defaulted: list[tuple[list[Any], str, int]] = []
        self._definitions_key = "$defs" if isinstance(data, Mapping) and "$defs" in data else "definitions"
        definitions = data.get(self._definitions_key) if isinstance(data, Mapping) else None
        self.definitions: Mapping[str, Any] = definitions if isinstance(definitions, Mapping) else {}
        self._resolved: dict[str, Any] = {}
        self._resolving: list[str] = []

    def error(self, message: str, loc: Sequence[Any], value: bool = False) -> ConfigError:
        place = position(self.data, loc, value)
        return ConfigError(message, (place.file if place else None) or self.path, place.line if place else None, place.column if place else None)

    def compile(self, default_name: str) -> tuple[type[BaseModel], list[CompiledRule]]:
        if not isinstance(self.data, Mapping):
            raise self.error("a schema file must be a mapping (a JSON Schema object)", [])
        if self._definitions_key in self.data and not isinstance(self.data[self._definitions_key], Mapping):
            raise self.error(f"`{self._definitions_key}` must be a mapping of name: schema", [self._definitions_key])
        body = {key: value for key, value in self.data.items() if key not in ("rules", "$defs", "definitions")}
        if body.get("type") != "object":
            raise self.error("the top-level schema must have `type: object`", ["type"])
        model = self._object(body, _model_name(str(body.get("title") or default_name)), [])
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise self.error("the top-level schema needs `properties`", ["properties"])
        return model, self.rules(self.data.get("rules") or [], ["rules"])

    def rules(self, raw_rules: Any, loc: list[Any]) -> list[CompiledRule]:
        if not isinstance(raw_rules, list):
            raise self.error("`rules` must be a list of {check, message}", loc)
        parsed = []
        for index, raw in enumerate(raw_rules):
            try:
                parsed.append(Rule.model_validate(raw))
            except ValidationError as exc:
                first = exc.errors()[0]
                raise self.error(f"rule: {first['msg']}", [*loc, index, *first["loc"]]) from None
        try:
            return compile_rules(parsed, "rule", self.data, loc)
        except ConfigError as exc:
            if exc.path is not None:
                raise
            raise self.error(exc.message, loc) from None

    def _object(self, schema: Mapping[str, Any], name: str, loc: list[Any]) -> Any:
        self._check_keywords(schema, "object", loc)
        properties = schema.get("properties") or {}
        if not properties and schema.get("additionalProperties") is True:
            # A free-form object (e.g. the arguments a tool call must have): any keys, any values.
            return dict[str, Any]
        if not isinstance(properties, Mapping) or not properties:
            raise self.error("an object needs `properties`", [*loc, "properties"])
        required = schema.get("required", [])
        if not isinstance(required, list) or any(key not in properties for key in required):
            raise self.error("`required` must list names found in `properties`", [*loc, "required"])
        extra: Literal["forbid", "ignore"] = "forbid" if schema.get("additionalProperties") is False else "ignore"
        return self._model(properties, set(required), name, [*loc, "properties"], ConfigDict(extra=extra), schema.get("description"))

    def properties_model(self, properties: Mapping[str, Any], name: str, loc: list[Any]) -> type[BaseModel]:
        """A model for a bare mapping of property schemas (a scorer's `options:`): nothing is
        required, unknown names are refused, and declared defaults must pass their own bounds."""
        if not isinstance(properties, Mapping):
            raise self.error("expected a mapping of name: {type, default, ...}", loc)
        return self._model(properties, set(), name, loc, ConfigDict(extra="forbid", validate_default=True), None)

    def _model(
        self,
        properties: Mapping[str, Any],
        required: set[str],
        name: str,
        loc: list[Any],
        config: ConfigDict,
        description: str | None,
    ) -> type[BaseModel]:
        fields: dict[str, Any] = {}
        for field_name, field_schema in properties.items():
            field_loc = [*loc, field_name]
            if not isinstance(field_name, str) or not field_name.isidentifier() or field_name.startswith("_"):
                raise self.error(f"property name {field_name!r} must be a plain identifier", field_loc)
            annotation = self._type(field_schema, name + _model_name(field_name), field_loc)
            # A value that may be null carries its bounds inside its type (see `_type`).
            info = self._field_info(field_schema, field_loc) if self._nullable(field_schema, field_loc) is None else _described(field_schema)
            if field_name in required:
                fields[field_name] = (annotation, Field(**info))
            elif "default" in field_schema:
                fields[field_name] = (annotation, Field(default=field_schema["default"], **info))
            else:
                fields[field_name] = (Optional[annotation], Field(default=None, **info))  # noqa: UP045
        try:
            return create_model(name, __config__=config, __doc__=description, **fields)
        except (TypeError, ValueError) as exc:
            raise self.error(f"cannot build a model: {exc}", loc) from None

    def _type(self, schema: Any, name: str, loc: list[Any]) -> Any:
        if not isinstance(schema, Mapping):
            raise self.error("a property schema must be a mapping with a `type`", loc)
        nullable = self._nullable(schema, loc)
        if nullable is not None:
            inner, inner_loc = nullable
            annotation = self._type(inner, name, inner_loc)
            bounds = {key: value for key, value in self._field_info(inner, inner_loc).items() if key != "description"}
            return Optional[Annotated[annotation, Field(**bounds)] if bounds else annotation]  # noqa: UP045
        if "$ref" in schema:
            return self._reference(schema, loc)
        kind = schema.get("type")
        if kind not in _KEYWORDS_BY_TYPE:
            raise self.error(f"unsupported type {kind!r}{did_you_mean(str(kind), _KEYWORDS_BY_TYPE)} (supported: {', '.join(sorted(_KEYWORDS_BY_TYPE))})", [*loc, "type"], value=True)
        self._check_keywords(schema, kind, loc)
        if "meaning" in schema:
            self._check_meaning(schema, kind, [*loc, "meaning"])
        if kind == "object":
            return self._object(schema, _model_name(str(schema.get("title") or name)), loc)
        if kind == "array":
            if "items" not in schema:
                raise self.error("an array needs `items`", loc)
            listed = list[self._item(schema["items"], _model_name(name + "Item"), [*loc, "items"])]  # type: ignore[misc,valid-type]
            if self.bounded and "maxItems" not in schema:
                self.defaulted.append((loc, "maxItems", DEFAULT_MAX_ITEMS))
                return Annotated[listed, Field(max_length=DEFAULT_MAX_ITEMS)]
            return listed
        if "enum" in schema:
            return self._enum(schema["enum"], kind, [*loc, "enum"])
        if kind == "string" and self.bounded and "maxLength" not in schema:
            self.defaulted.append((loc, "maxLength", DEFAULT_MAX_LENGTH))
            return Annotated[str, Field(max_length=DEFAULT_MAX_LENGTH)]
        return _SCALAR_TYPES[kind]

    def _item(self, schema: Any, name: str, loc: list[Any]) -> Any:
        """The type of a list's items with their own bounds (a property's are on its field)."""
        annotation = self._type(schema, name, loc)
        if not isinstance(schema, Mapping) or self._nullable(schema, loc) is not None:
            return annotation  # a value that may be null carries its bounds inside its type
        bounds = {key: value for key, value in self._field_info(schema, loc).items() if key != "description"}
        return Annotated[annotation, Field(**bounds)] if bounds else annotation

    def _nullable(self, schema: Mapping[str, Any], loc: list[Any]) -> tuple[Mapping[str, Any], list[Any]] | None:
        """The schema of the value, and where it is written, when `schema` says the value may
        also be null in one of JSON Schema's two ways: `type: [T, "null"]`, or `anyOf` of a
        schema and `{type: "null"}`. None for a schema that does not; any other union is refused."""
        if not isinstance(schema, Mapping):
            return None
        for keyword in ("oneOf", "allOf", "not"):
            if keyword in schema:
                raise self.error(f"`{keyword}` is not supported; {_NULLABLE_FORMS}", [*loc, keyword])
        kind = schema.get("type")
        if isinstance(kind, list):
            others = [member for member in kind if member != "null"]
            if len(others) != 1 or len(kind) != 2 or not isinstance(others[0], str):
                raise self.error(f"`type: {_flow(kind)}`: a value has one type; {_NULLABLE_FORMS}", [*loc, "type"], value=True)
            return {**schema, "type": others[0]}, loc
        if "anyOf" not in schema:
            return None
        branches = schema["anyOf"]
        extra = [key for key in schema if key != "anyOf" and key not in _ANNOTATION_KEYWORDS]
        if extra:
            raise self.error(f"keyword {extra[0]!r} cannot stand beside `anyOf`; put it in the schema that is not null", [*loc, extra[0]])
        nulls = [index for index, branch in enumerate(branches or []) if isinstance(branch, Mapping) and branch.get("type") == "null" and len(branch) == 1]
        if not isinstance(branches, list) or len(branches) != 2 or len(nulls) != 1:
            raise self.error(f"`anyOf` is supported only for a value that may be null; {_NULLABLE_FORMS}", [*loc, "anyOf"])
        index = 1 - nulls[0]
        return branches[index], [*loc, "anyOf", index]

    def _reference(self, schema: Mapping[str, Any], loc: list[Any]) -> Any:
        """A local `$ref` (`#/$defs/Name`): the sub-schema written once under `$defs` and used
        wherever it is referenced (one model, however many times)."""
        extra = [key for key in schema if key != "$ref" and key not in _ANNOTATION_KEYWORDS]
        if extra:
            raise self.error(f"keyword {extra[0]!r} cannot stand beside `$ref`; put it in the referenced schema", [*loc, extra[0]])
        reference = schema["$ref"]
        prefix = f"#/{self._definitions_key}/"
        if not isinstance(reference, str) or not reference.startswith(("#/$defs/", "#/definitions/")):
            raise self.error(f"`$ref` {reference!r}: only local references are supported, written {prefix}Name", [*loc, "$ref"], value=True)
        target = reference.split("/", 2)[2]
        if not reference.startswith(prefix) and target in self.definitions:
            raise self.error(f"`$ref` {reference!r}: the definitions of this file are under `{self._definitions_key}`; write {prefix + target!r}", [*loc, "$ref"], value=True)
        if not reference.startswith(prefix) or target not in self.definitions:
            known = ", ".join(self.definitions) or "none"
            raise self.error(
                f"`$ref` {reference!r}: no definition {target!r} under `{self._definitions_key}`{did_you_mean(target, self.definitions)} (defined: {known})",
                [*loc, "$ref"], value=True,
            )
        if target in self._resolving:
            raise self.error(f"`$ref` {reference!r}: a schema that contains itself is not supported", [*loc, "$ref"], value=True)
        if target not in self._resolved:
            self._resolving.append(target)
            try:
                self._resolved[target] = self._type(self.definitions[target], _model_name(target), [self._definitions_key, target])
            finally:
                self._resolving.pop()
        return self._resolved[target]

    def _enum(self, values: Any, kind: str, loc: list[Any]) -> Any:
        if not isinstance(values, list) or not values:
            raise self.error("`enum` must be a non-empty list", loc)
        if any(not isinstance(value, _SCALAR_TYPES[kind]) for value in values):
            raise self.error(f"every `enum` value must be a {kind}", loc)
        literal = Literal[tuple(values)]  # type: ignore[valid-type]
        if kind != "string":
            return literal
        canonical = {value.strip().casefold(): value for value in values}
        return Annotated[literal, BeforeValidator(_normalise_enum(canonical))]

    def _field_info(self, schema: Mapping[str, Any], loc: list[Any]) -> dict[str, Any]:
        info: dict[str, Any] = {}
        if "description" in schema:
            info["description"] = schema["description"]
        for keyword, argument in _CONSTRAINTS.items():
            if keyword in schema:
                value = schema[keyword]
                valid = isinstance(value, str) if keyword == "pattern" else isinstance(value, (int, float))
                if not valid or isinstance(value, bool):
                    raise self.error(f"`{keyword}` has a wrong value {value!r}", [*loc, keyword])
                if keyword == "pattern":
                    _check_pattern(value, lambda message: self.error(message, [*loc, keyword], value=True))
                info[argument] = value
        return info

    def _check_meaning(self, schema: Mapping[str, Any], kind: str, loc: list[Any]) -> None:
        """`meaning:` says which answers are good for the scorer: each value of an enum or a
        boolean good, bad or neutral, or which way a number is better (see proving/meanings.py)."""
        from .proving.meanings import NUMBER_MEANINGS, POLARITIES, matching_value

        written = schema["meaning"]
        values = list(schema.get("enum") or ([True, False] if kind == "boolean" else []))
        if not values:
            if kind in ("number", "integer") and written in NUMBER_MEANINGS:
                return
            if written in NUMBER_MEANINGS:  # a number's meaning on a field of another type: `type:` is the slip
                raise self.error(f"type {kind!r} does not fit `meaning: {written}`, which is a number's: is the type meant to be 'number' or 'integer'?", [*loc[:-1], "type"], value=True)
            expected = " or ".join(NUMBER_MEANINGS) if kind in ("number", "integer") else "an `enum` to give meanings to"
            raise self.error(f"`meaning` {written!r}: expected {expected}", loc, value=True)
        if not isinstance(written, Mapping):
            example = ", ".join(f"{_shown_value(value)}: {'good' if index == 0 else 'bad'}" for index, value in enumerate(values[:2]))
            raise self.error(f"`meaning` must say what each value means, e.g. {{{example}}}", loc, value=True)
        named = set()
        for key, polarity in written.items():
            value = matching_value(key, values)
            if value not in values and _quotes(schema.get("description"), key):
                # The meaning and the description name the same value: the enum is the odd one out.
                shown = ", ".join(_shown_value(value) for value in values)
                raise self.error(
                    f"`enum` ({shown}) has no {_shown_value(key)}, which its `meaning:` and its description name: is a value of the enum misspelt?",
                    [*loc[:-1], "enum"], value=True,
                )
            if value not in values:
                shown = ", ".join(_shown_value(value) for value in values)
                raise self.error(f"`meaning` names {_shown_value(key)}, which is not a value of the field ({shown}){did_you_mean(str(key), [str(value) for value in values])}", [*loc, key])
            if polarity not in POLARITIES:
                raise self.error(f"`meaning` of {_shown_value(key)}: {polarity!r} is not one of {', '.join(POLARITIES)}", [*loc, key], value=True)
            named.add(value)
        missing = [value for value in values if value not in named]
        if missing:
            raise self.error(f"`meaning` says nothing of {', '.join(_shown_value(value) for value in missing)}: give every value good, bad or neutral", loc)
        if not {"good", "bad"} <= set(written.values()):
            raise self.error("`meaning` needs a good value and a bad one: with only one kind, no answer is better than another", loc)

    def _check_keywords(self, schema: Mapping[str, Any], kind: str, loc: list[Any]) -> None:
        allowed = _KEYWORDS_BY_TYPE[kind] | _ANNOTATION_KEYWORDS | {"type"}
        for keyword in schema:
            if keyword not in allowed:
                written, typed = position(self.data, [*loc, keyword]), position(self.data, [*loc, "type"], value=True)
                if written is not None and typed is not None and written.file != typed.file:  # the type overrides a base's declaration
                    raise self.error(f"type {kind!r} does not take {keyword!r}, which the declaration it overrides has: keep that declaration's type, or give the option another name", [*loc, "type"], value=True)
                meant = _type_the_rest_means(schema, kind, str(keyword))
                if meant is not None:  # the keywords and the default agree on another type: `type:` is the slip
                    raise self.error(f"type {kind!r} does not fit {keyword!r} and the default {_shown_value(schema['default'])}, which are {'an' if meant[0] in 'aeiou' else 'a'} {meant}'s: is the type meant to be {meant!r}?", [*loc, "type"], value=True)
                raise self.error(f"keyword {keyword!r} is not supported for type {kind!r}{did_you_mean(str(keyword), sorted(allowed))}", [*loc, keyword])


def _check_pattern(pattern: str, error: Callable[[str], ConfigError]) -> None:
    """A `pattern` the validator can compile (its regular expressions are Rust's, which have
    no look-around or backreferences), refused at its line rather than when a model is built."""
    try:
        TypeAdapter(Annotated[str, Field(pattern=pattern)])
    except SchemaError as exc:
        reason = str(exc).strip().splitlines()[-1].strip().removeprefix("error: ")
        raise error(f"`pattern` {pattern!r} is not a regular expression answers can be checked with: {reason}") from None


_NULLABLE_FORMS = 'a value that may be null is written `type: [integer, "null"]` or `anyOf: [{type: integer}, {type: "null"}]`'


def _quotes(description: Any, value: Any) -> bool:
    """Whether a field's description quotes `value` as a value ('"yes" when ...')."""
    return isinstance(description, str) and any(f"{mark}{value}{mark}" in description for mark in ('"', "'", "`"))


def _type_the_rest_means(schema: Mapping[str, Any], kind: str, keyword: str) -> str | None:
    """The one other type that both `keyword` and the schema's `default` belong to, when the
    declared `kind` fits neither (a number's bounds and default under `type: string`)."""
    if "default" not in schema:
        return None
    default = schema["default"]
    for other, keywords in _KEYWORDS_BY_TYPE.items():
        python_type: type | tuple[type, ...] | None = (int, float) if other == "number" else _SCALAR_TYPES.get(other)
        fits = python_type is not None and isinstance(default, python_type) and not (isinstance(default, bool) and other != "boolean")
        if other != kind and keyword in keywords and fits and not isinstance(default, _SCALAR_TYPES.get(kind, type(None))):
            return other
    return None


def _shown_value(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)


def _flow(values: Sequence[Any]) -> str:
    return "[" + ", ".join(map(str, values)) + "]"


def _described(schema: Mapping[str, Any]) -> dict[str, Any]:
    return {"description": schema["description"]} if "description" in schema else {}


def answer_bounds(model: type[BaseModel]) -> list[str]:
    """The bounds of an answer's lists and strings as the judge is sent them, one per field
    (`verdicts ≤ 100 items`, `verdicts[].reason ≤ 1000 characters`), in schema order."""
    schema = model.model_json_schema()
    found: list[str] = []

    def walk(node: Mapping[str, Any], path: str) -> None:
        if "$ref" in node:
            walk(schema.get("$defs", {})[str(node["$ref"]).rsplit("/", 1)[-1]], path)
            return
        for option in node.get("anyOf", []):
            walk(option, path)
        if "maxItems" in node:
            found.append(f"{path} ≤ {node['maxItems']} items")
        if "maxLength" in node:
            found.append(f"{path} ≤ {node['maxLength']} characters")
        if isinstance(node.get("items"), Mapping):
            walk(node["items"], f"{path}[]")
        for name, child in (node.get("properties") or {}).items():
            walk(child, f"{path}.{name}" if path else name)

    walk(schema, "")
    return found


class SchemaFile(NamedTuple):
    """An answer schema file compiled: its data as written (with places), its Pydantic model,
    the rules declared in it, and where it leaves a string or a list to the default bounds."""

    data: Any
    model: type[BaseModel]
    rules: list[CompiledRule]
    defaulted: list[tuple[list[Any], str, int]]


#: The schema files compiled in this process, each as its text last read (see `load_shared`).
_schema_files: dict[Path, SchemaFile] = {}
_SCHEMA_FILES_KEPT = 512


def schema_file(path: Path) -> SchemaFile:
    """The answer schema file at `path`, compiled once for each text it has: the compiler, the
    warnings and the notes of a catalog read every schema file, and catalogs share them. Its
    mistakes are raised as ConfigError, at their line, each time it is read."""
    data = load_shared(path)
    found = _schema_files.get(path)
    if found is None or found.data is not data:
        compiler = SchemaCompiler(data, path, bounded=True)
        model, rules = compiler.compile(path.stem)
        if len(_schema_files) >= _SCHEMA_FILES_KEPT:
            _schema_files.clear()  # a long-lived process reading many drafts (the workbench) does not grow
        found = _schema_files[path] = SchemaFile(data, model, rules, compiler.defaulted)
    return found


def catalog_bound_notes(source: CatalogSource, compiled: Mapping[str, tuple[ScorerDefinition, ScorerPlan]]) -> list[ConfigError]:
    """Where the answer schemas of the catalog's own schema folder, read by its own scorers
    (compiled clean), get the default bounds: each field once, in file order. Notes, not
    warnings: `scorers check` shows them so an author sees what the judge is sent."""
    own_folder = source.schemas_path[0].resolve() if source.schemas_path else None
    read: set[Path] = set()
    for scorer_id in source.scorers:
        for step in compiled[scorer_id][0].steps if scorer_id in compiled else ():
            schema = step_kind(step.kind).sources(step).schema
            found = source.schema_file(schema.text) if schema is not None else None
            if found is not None and own_folder is not None and found.resolve().is_relative_to(own_folder):
                read.add(found)
    notes = [note for path in read for note in default_bounds(path)]
    return sorted(notes, key=lambda note: (note.path or "", note.line or 0, note.column or 0))


def default_bounds(path: Path) -> list[ConfigError]:
    """Where an answer schema (that compiles) leaves a string or a list to the default
    bounds, each placed at the field, worded for its author (what `scorers check` notes)."""
    compiled = schema_file(path)
    noted = []
    for loc, keyword, bound in compiled.defaulted:
        unit = "items" if keyword == "maxItems" else "characters"
        message = f"{field_path(loc)}: at most {bound} {unit} in the judge's answer (the default bound; write {keyword} to change it)"
        place = position(compiled.data, loc)
        noted.append(ConfigError(message, path, place.line if place else None, place.column if place else None))
    return noted


def field_path(loc: Sequence[Any]) -> str:
    """A field's place in a schema as `answer_bounds` names it: `verdicts[].reason`."""
    path, parts = "", list(loc)
    while parts:
        part = parts.pop(0)
        if part in ("properties", "$defs", "definitions") and parts:
            name = str(parts.pop(0))
            path = f"{path}.{name}" if path else name
        elif part == "items":
            path += "[]"
    return path or "the answer"

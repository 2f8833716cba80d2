"""Where a catalog comes from: safe YAML loading that remembers where every mapping key and
value came from (so that an error deep inside a definition is reported as FILE:LINE:COLUMN),
the catalog's prompt and schema folders, and `extends:` merging."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import yaml
from pydantic import BaseModel, ValidationError

from ..errors import ConfigError
from .spec import CatalogFile
from .error_paths import NUMBER_ERRORS, data_loc, key_named
from .suggest import did_you_mean, keys_of, model_at
from .yaml_errors import yaml_error
from .yaml_surprises import Surprise, explained, remember, surprise, surprises_in

_PACKAGED_CATALOG = Path(__file__).parent.parent / "_catalog"
_SOURCE_CATALOG = Path(__file__).parent.parent.parent


def builtin_catalog_path() -> Path:
    """The built-in `scorers.yaml`: inside the installed package, or at the top of a checkout."""
    packaged = _PACKAGED_CATALOG / "scorers.yaml"
    return packaged if packaged.is_file() else _SOURCE_CATALOG / "scorers.yaml"


class Place(NamedTuple):
    """Where something was written: file, 1-based line and column. Kept per key, value and
    item, not per container, because `extends` merges a base scorer from one file with
    overrides from another."""

    file: str
    line: int
    column: int


class Span(NamedTuple):
    """A value as written: where it starts, and its source text (quotes and line breaks
    included), so that a place inside it (a misspelt name in an expression) can be found."""

    start: Place
    raw: str


class LocatedDict(dict[Any, Any]):
    """A dict from YAML that knows where it, each of its keys and each value were written."""

    place: Place
    key_places: dict[Any, Place]
    value_spans: dict[Any, Span]


class LocatedList(list[Any]):
    """A list from YAML that knows where it and each of its items were written."""

    place: Place
    item_places: list[Place]
    item_spans: list[Span]


class _Locating:
    """The constructor half of a loader that records where every key, value and item was
    written. Places name `file`; a value's source text is cut from `text` (marks count
    characters, the same in the C and the pure-Python parser)."""

    file: str
    text: str
    #: The plain values YAML reads otherwise than they look (see yaml_surprises.py).
    surprises: list[Surprise]

    if TYPE_CHECKING:  # given by the SafeConstructor each loader mixes this into

        def construct_object(self, node: yaml.Node, deep: bool = False) -> Any: ...

        def flatten_mapping(self, node: yaml.MappingNode) -> None: ...

    def _place(self, mark: yaml.Mark) -> Place:
        return Place(self.file, mark.line + 1, mark.column + 1)

    def _span(self, node: yaml.Node) -> Span:
        raw = self.text[node.start_mark.index : node.end_mark.index] if isinstance(node, yaml.ScalarNode) else ""
        return Span(self._place(node.start_mark), raw)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> LocatedDict:
        self.flatten_mapping(node)
        mapping = LocatedDict()
        mapping.place = self._place(node.start_mark)
        mapping.key_places = {}
        mapping.value_spans = {}
        for key_node, value_node in node.value:
            self._look_at(key_node)
            self._look_at(value_node)
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise yaml.constructor.ConstructorError(
                    None, None, "mapping keys must be plain values", key_node.start_mark
                )
            if key in mapping:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            mapping[key] = self.construct_object(value_node, deep=True)
            mapping.key_places[key] = self._place(key_node.start_mark)
            mapping.value_spans[key] = self._span(value_node)
        return mapping

    def _look_at(self, node: yaml.Node) -> None:
        found = surprise(node)
        if found is not None:
            self.surprises.append(found)

    def construct_sequence(self, node: yaml.SequenceNode, deep: bool = False) -> LocatedList:
        for child in node.value:
            self._look_at(child)
        items = LocatedList(self.construct_object(child, deep=True) for child in node.value)
        items.place = self._place(node.start_mark)
        items.item_places = [self._place(child.start_mark) for child in node.value]
        items.item_spans = [self._span(child) for child in node.value]
        return items


class _LocatingLoader(_Locating, yaml.SafeLoader):
    """SafeLoader (no arbitrary Python objects) that records line numbers. Pure Python: slow,
    but its error messages and marks are the ones `_yaml_error` turns into a place to fix."""


# libyaml's parser is several times faster; when PyYAML was built without it, the pure one does.
_FastBase: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _FastLocatingLoader(_Locating, _FastBase):  # type: ignore[misc,valid-type]
    """The same loader on libyaml's parser, for files that load: a file that does not is read
    again by `_LocatingLoader`, so every error reads as it always has."""


for _loader in (_LocatingLoader, _FastLocatingLoader):
    _loader.add_constructor("tag:yaml.org,2002:map", _Locating.construct_mapping)  # type: ignore[type-var]
    _loader.add_constructor("tag:yaml.org,2002:seq", _Locating.construct_sequence)  # type: ignore[type-var]


def _load_located(loader_class: type[_Locating], text: str, path: Path) -> Any:
    loader = loader_class(text)  # type: ignore[call-arg]
    loader.file = str(path)
    loader.text = text
    loader.surprises = []
    try:
        data = loader.get_single_data()  # type: ignore[attr-defined]
    finally:
        loader.dispose()  # type: ignore[attr-defined]
    remember(str(path), loader.surprises)
    return data


def load_yaml(path: Path) -> Any:
    """Read a YAML file with the safe loader; syntax errors become ConfigError(path, line)."""
    return _parsed(_text_of(path), path)


#: Files read by `load_shared`, by path and text, with the surprises found in them.
_shared: dict[tuple[Path, str], tuple[Any, list[Surprise]]] = {}
_SHARED_KEPT = 512


def load_shared(path: Path) -> Any:
    """`load_yaml` for a file that several checks of a catalog read (an answer schema: the
    compiler, the lints, the notes of default bounds): parsed once for each text it has, and
    the same data given to every reader, which must not change it."""
    text = _text_of(path)
    found = _shared.get((path, text))
    if found is None:
        data = _parsed(text, path)
        found = (data, list(surprises_in(str(path))))
        if len(_shared) >= _SHARED_KEPT:
            _shared.clear()  # a long-lived process reading many drafts (the workbench) does not grow
        _shared[(path, text)] = found
    else:
        remember(str(path), found[1])  # the file's surprises are those of this text again
    return found[0]


def _text_of(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("file not found", path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read file: {exc}", path) from None


def _parsed(text: str, path: Path) -> Any:
    try:
        # libyaml does not count a byte-order mark in its marks' index, the pure parser does.
        return _load_located(_FastLocatingLoader, text.removeprefix("\ufeff"), path)
    except yaml.YAMLError:
        pass  # reported below, by the parser whose messages and marks the error is built from
    try:
        return _load_located(_LocatingLoader, text, path)
    except yaml.MarkedYAMLError as exc:
        raise yaml_error(exc, path) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", path) from None


def position(data: Any, loc: Sequence[Any], value: bool = False) -> Place | None:
    """Where the deepest node along `loc` that is known was written: its key (or, with
    `value`, its value: the place to fix when the value is wrong rather than the key)."""
    place: Place | None = getattr(data, "place", None)
    node = data
    for index, part in enumerate(loc):
        last = index == len(loc) - 1
        if isinstance(node, LocatedDict) and part in node:
            span = node.value_spans.get(part)
            place = span.start if (value and last and span) else node.key_places.get(part, node.place)
            node = node[part]
        elif isinstance(node, LocatedList) and isinstance(part, int) and 0 <= part < len(node):
            place = node.item_places[part]
            node = node[part]
        else:
            break
    return place


def span_of(data: Any, loc: Sequence[Any]) -> Span | None:
    """The scalar value at `loc` as written, when `loc` leads to one."""
    *parents, last = loc
    node = data
    for part in parents:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    if isinstance(node, LocatedDict):
        return node.value_spans.get(last)
    if isinstance(node, LocatedList) and isinstance(last, int) and 0 <= last < len(node.item_spans):
        return node.item_spans[last]
    return None


def place_in(span: Span, offset: int | None = None, pattern: str | None = None) -> Place:
    """The place of the first match of `pattern` (of its first group, if it has one), or of
    the character at `offset` of the value's text, inside a value as written; the value's
    start when neither can be found.
    Offsets count from the text's first character (after an opening quote); they are exact
    for plain and quoted one-line values, which is how expressions are written."""
    raw = span.raw
    quoted = 1 if raw[:1] in ("'", '"') else 0
    if pattern is not None:
        found = re.search(pattern, raw[quoted:])
        index = quoted + (found.start(1) if found.re.groups else found.start()) if found else None
    elif offset is not None:
        index = offset + quoted
        if index > len(raw):
            index = None
    else:
        index = None
    if index is None:
        return span.start
    before = raw[:index]
    newlines = before.count("\n")
    if not newlines:
        return Place(span.start.file, span.start.line, span.start.column + index)
    return Place(span.start.file, span.start.line + newlines, index - before.rfind("\n"))


def locate(data: Any, loc: Sequence[Any]) -> tuple[str | None, int | None]:
    """File and line of the deepest node along `loc` (a pydantic error location) that is known."""
    place = position(data, loc)
    return (place.file, place.line) if place is not None else (None, None)


def validation_error(exc: ValidationError, data: Any, label: str, fallback_path: Path, model: type[BaseModel] | None = None) -> ConfigError:
    """The first problem pydantic found in `data`, at the place to fix: an unknown key at the
    key (with the key meant, when `model` tells which keys there are), a wrong value at the value."""
    errors = exc.errors()
    # A misspelt key shows up both as an unknown key and as a missing one; the unknown one
    # points at the line to fix.
    first = next((error for error in errors if error["type"] == "extra_forbidden"), errors[0])
    return _placed(first, data, label, fallback_path, model)


def validation_errors(exc: ValidationError, data: Any, label: str, fallback_path: Path, model: type[BaseModel] | None = None) -> list[ConfigError]:
    """Every problem pydantic found in `data`, each placed as `validation_error` places the
    first; a misspelt key once, as the unknown key (not also as the key it left missing)."""
    errors = exc.errors()
    misspelt = {tuple(error["loc"][:-1]) for error in errors if error["type"] == "extra_forbidden"}
    return [
        _placed(error, data, label, fallback_path, model)
        for error in errors
        if not (error["type"] == "missing" and tuple(error["loc"][:-1]) in misspelt)
    ]


def _placed(first: Any, data: Any, label: str, fallback_path: Path, model: type[BaseModel] | None) -> ConfigError:
    """One of pydantic's problems as a ConfigError at its place in `data`."""
    loc = data_loc(data, first["loc"])
    field = ".".join(str(part) for part in [label, *loc] if part != "")
    message = first["msg"].removeprefix("Value error, ")  # a validator's own words
    named = key_named(data, loc, message) if first["type"] == "value_error" else None
    if named is not None:  # a check of a mapping that says which of its keys is wrong: at that key
        loc, message = [*loc, named], message.removeprefix(f"{named}: ")
        field = f"{field}.{named}"
    if first["type"] == "extra_forbidden":
        allowed = keys_of(parent) if model is not None and (parent := model_at(model, first["loc"][:-1])) is not None else []
        message = f"unknown key {loc[-1]!r}{did_you_mean(str(loc[-1]), allowed)}" + (f" (known: {', '.join(allowed)})" if allowed else "")
        place = position(data, loc)
    elif first["type"] == "union_tag_invalid":
        tag = str(first.get("ctx", {}).get("tag"))
        expected = str(first.get("ctx", {}).get("expected_tags", ""))
        loc = [*loc, "kind"]
        field = f"{field}.kind"
        kinds = [part.strip(" '") for part in expected.split(",")]
        message = f"unknown step kind {tag!r}{did_you_mean(tag, kinds)} (kinds: {', '.join(kinds)})"
        place = position(data, loc, value=True)
    else:
        place = position(data, loc, value=True)
        if first["type"] in NUMBER_ERRORS:
            message = f"expected {NUMBER_ERRORS[first['type']]}, got {first['input']!r}"
        message += block_for_list(data, loc, first["type"])
    if place is None:
        return ConfigError(f"{field}: {message}", fallback_path)
    return explained(ConfigError(f"{field}: {message}", place.file or fallback_path, place.line, place.column))


def block_for_list(data: Any, loc: Sequence[Any], error: str) -> str:
    """What to add to pydantic's "should be a valid list" at a block scalar (`>-`, `|`):
    its lines are one text."""
    block = span_of(data, loc) if error == "list_type" and loc else None
    if block is None or block.raw[:1] not in (">", "|"):
        return ""
    return f"; a `{block.raw.splitlines()[0].strip()}` block is one text, whatever its lines: write a list, one `- item` a line"


def _merge(base: Any, override: Any, at: str = "") -> Any:
    """`extends` and `defaults`: mappings merge key by key; `steps` merge by step id; an
    option given as a plain value sets the default of the option it overrides, and an option
    or a step's bound given as null is dropped; anything else replaces."""
    if isinstance(base, LocatedDict) and isinstance(override, LocatedDict):
        merged = LocatedDict({**base, **override})
        merged.place = override.place
        merged.key_places = {**base.key_places, **override.key_places}
        merged.value_spans = {**base.value_spans, **override.value_spans}
        for key in base.keys() & override.keys():
            merged[key] = _merge(base[key], override[key], at=f"{at}.{key}" if at else str(key))
            if at == "options" and isinstance(merged[key], LocatedDict) and not isinstance(override[key], Mapping):
                # an option given as its default: the default is where the override wrote it
                merged[key].key_places["default"] = override.key_places[key]
                if key in override.value_spans:
                    merged[key].value_spans["default"] = override.value_spans[key]
        if at in ("options", "bounds"):  # `name: null` drops an inherited option, or bound, the scorer has no use for
            for key in [key for key, value in override.items() if value is None and key in base]:
                del merged[key]
                del merged.key_places[key]
        return merged
    if at == "steps" and isinstance(base, LocatedList) and isinstance(override, LocatedList):
        return _merge_steps(base, override)
    if at.startswith("options.") and at.count(".") == 1 and isinstance(base, LocatedDict) and not isinstance(override, Mapping):
        option = LocatedDict({**base, "default": override})
        option.place = base.place
        option.key_places = dict(base.key_places)
        option.value_spans = dict(base.value_spans)
        return option
    return override


def _merge_steps(base: LocatedList, override: LocatedList) -> LocatedList:
    steps = LocatedList(base)
    steps.place = override.place
    steps.item_places = list(base.item_places)
    steps.item_spans = list(base.item_spans)
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
        steps.item_spans[positions[step_id]] = override.item_spans[index]
    return steps


class CatalogSource:
    """One catalog file: its scorers as written (with `extends` resolved on request), and
    the folders its templates and schemas are looked up in, its own before the fallback's."""

    def __init__(self, path: Path, fallback: CatalogSource | None) -> None:
        self.path = path.resolve()
        self.fallback = fallback
        data = load_yaml(self.path)
        if not isinstance(data, Mapping):
            raise ConfigError("a catalog must be a mapping with a `scorers:` key", self.path, locate(data, [])[1])
        try:
            self.file = CatalogFile.model_validate(data)
        except ValidationError as exc:
            raise validation_error(exc, data, "", self.path, CatalogFile) from None
        self.scorers: Mapping[str, Any] = data["scorers"]
        self.data: Mapping[str, Any] = data  # as written, with places: sections other than scorers read it
        folder = self.path.parent
        self.templates_path: list[Path] = [folder / self.file.prompts, *(fallback.templates_path if fallback else [])]
        self.schemas_path: list[Path] = [folder / self.file.schemas, *(fallback.schemas_path if fallback else [])]
        self.own_defaults: Any = data.get("defaults") or _empty_like(data)
        # A scorer written here starts from the built-in defaults, then this file's.
        self.defaults: Any = _merge(fallback.defaults, self.own_defaults) if fallback else self.own_defaults
        self._resolved: dict[str, Any] | None = None

    def schema_file(self, name: str) -> Path | None:
        """The file a step's `schema:` names: in the first schema folder holding it (this
        catalog's own, then the built-in one), None when none does."""
        return next((folder / name for folder in self.schemas_path if (folder / name).is_file()), None)

    def raw_definition(self, scorer_id: str, seen: tuple[str, ...] = ()) -> Any:
        """The scorer's mapping with `extends` applied. A base is a scorer of this file or,
        failing that (or when a scorer extends the built-in of its own id), a built-in."""
        if scorer_id in seen:
            raise ConfigError(f"extends: cycle {' -> '.join([*seen, scorer_id])}", self.path)
        inherited = self.fallback.resolved() if self.fallback else {}
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
            return _merge(self.defaults, raw)
        if base_id == scorer_id and scorer_id not in inherited:
            itself = position(raw, ["extends"], value=True)
            raise ConfigError(f"scorers.{scorer_id}: extends itself", *(itself or (self.path, None, None)))
        if base_id != scorer_id:
            where = position(raw, ["extends"], value=True) or Place(str(self.path), 0, 0)
            if base_id in seen:
                cycle = " -> ".join([*seen[seen.index(base_id) :], scorer_id, str(base_id)])
                raise ConfigError(f"scorers.{scorer_id}.extends: cycle {cycle}", where.file, where.line, where.column)
            if base_id not in self.scorers and base_id not in inherited:
                scorer_ids = [*self.scorers, *inherited]
                raise ConfigError(
                    f"scorers.{scorer_id}.extends: unknown scorer {base_id!r}"
                    + (did_you_mean(str(base_id), scorer_ids) or f" (known: {', '.join(scorer_ids)})"),
                    where.file, where.line or None, where.column,
                )
        base = inherited[base_id] if base_id == scorer_id else self.raw_definition(str(base_id), (*seen, scorer_id))
        merged = _merge(_merge(base, self.own_defaults), raw)
        del merged["extends"]
        if "abstract" not in raw:  # a scorer built on an abstract base is concrete unless it says otherwise
            merged.pop("abstract", None)
        if "replaces" not in raw:  # what a base replaced, the scorer built on it does not
            merged.pop("replaces", None)
        return merged

    def resolved(self) -> dict[str, Any]:
        """Every scorer this catalog offers, `extends` applied: its own, then the fallback's
        that it does not redefine."""
        if self._resolved is None:
            resolved = {scorer_id: self.raw_definition(scorer_id) for scorer_id in self.scorers}
            inherited = self.fallback.resolved() if self.fallback else {}
            resolved.update({scorer_id: raw for scorer_id, raw in inherited.items() if scorer_id not in resolved})
            self._resolved = resolved
        return self._resolved


def _empty_like(data: Any) -> LocatedDict:
    """An empty mapping placed where `data` starts, for a file that has no `defaults:`."""
    empty = LocatedDict()
    empty.place = getattr(data, "place", Place("", 1, 1))
    empty.key_places = {}
    empty.value_spans = {}
    return empty

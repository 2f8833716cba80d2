"""Where a catalog comes from: safe YAML loading that remembers where every mapping key
came from (so that an error deep inside a definition is reported as FILE:LINE), the
catalog's prompt and schema folders, and `extends:` merging."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..errors import ConfigError
from .spec import CatalogFile

_PACKAGED_CATALOG = Path(__file__).parent.parent / "_catalog"
_SOURCE_CATALOG = Path(__file__).parent.parent.parent


def builtin_catalog_path() -> Path:
    """The built-in `scorers.yaml`: inside the installed package, or at the top of a checkout."""
    packaged = _PACKAGED_CATALOG / "scorers.yaml"
    return packaged if packaged.is_file() else _SOURCE_CATALOG / "scorers.yaml"


#: (file, 1-based line). Kept per key and per item, not per container, because `extends`
#: merges a base scorer from one file with overrides from another.
Place = tuple[str, int]


class LocatedDict(dict[Any, Any]):
    """A dict from YAML that knows where it and each of its keys were written."""

    place: Place
    key_places: dict[Any, Place]


class LocatedList(list[Any]):
    """A list from YAML that knows where it and each of its items were written."""

    place: Place
    item_places: list[Place]


class _LocatingLoader(yaml.SafeLoader):
    """SafeLoader (no arbitrary Python objects) that records line numbers."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> LocatedDict:
        self.flatten_mapping(node)
        mapping = LocatedDict()
        mapping.place = (node.start_mark.name, node.start_mark.line + 1)
        mapping.key_places = {}
        for key_node, value_node in node.value:
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
            mapping.key_places[key] = (key_node.start_mark.name, key_node.start_mark.line + 1)
        return mapping

    def construct_sequence(self, node: yaml.SequenceNode, deep: bool = False) -> LocatedList:
        items = LocatedList(self.construct_object(child, deep=True) for child in node.value)
        items.place = (node.start_mark.name, node.start_mark.line + 1)
        items.item_places = [(child.start_mark.name, child.start_mark.line + 1) for child in node.value]
        return items


_LocatingLoader.add_constructor("tag:yaml.org,2002:map", _LocatingLoader.construct_mapping)
_LocatingLoader.add_constructor("tag:yaml.org,2002:seq", _LocatingLoader.construct_sequence)


def load_yaml(path: Path) -> Any:
    """Read a YAML file with the safe loader; syntax errors become ConfigError(path, line)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("file not found", path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read file: {exc}", path) from None
    loader = _LocatingLoader(text)
    loader.name = str(path)  # marks (and so every node's `path`) name the file
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        message = f"invalid YAML: {exc.problem or exc}"
        if exc.context and exc.context_mark is not None and exc.context_mark.line + 1 != line:
            # e.g. an unclosed bracket: the error shows up lines after the place to fix
            message += f" (in {exc.context.removeprefix('while parsing ')} that starts at line {exc.context_mark.line + 1})"
        raise ConfigError(message, path, line) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", path) from None
    finally:
        loader.dispose()


def locate(data: Any, loc: Sequence[Any]) -> tuple[str | None, int | None]:
    """File and line of the deepest node along `loc` (a pydantic error location) that is known."""
    path, line = getattr(data, "place", (None, None))
    node = data
    for part in loc:
        if isinstance(node, LocatedDict) and part in node:
            path, line = node.key_places.get(part, node.place)
            node = node[part]
        elif isinstance(node, LocatedList) and isinstance(part, int) and 0 <= part < len(node):
            path, line = node.item_places[part]
            node = node[part]
        else:
            break
    return path, line


def line_of(data: Any, loc: Sequence[Any]) -> int | None:
    return locate(data, loc)[1]


def validation_error(exc: ValidationError, data: Any, label: str, fallback_path: Path) -> ConfigError:
    # A misspelt key shows up both as an unknown key and as a missing one; the unknown one
    # points at the line to fix.
    first = next((error for error in exc.errors() if error["type"] == "extra_forbidden"), exc.errors()[0])
    # Drop the discriminator tags pydantic adds to the location of a tagged union.
    loc = [part for part in first["loc"] if part not in ("llm", "reason", "score") or not isinstance(part, str)]
    path, line = locate(data, loc)
    field = ".".join(str(part) for part in [label, *loc] if part != "")
    return ConfigError(f"{field}: {first['msg']}", path or fallback_path, line)


def _merge(base: Any, override: Any, at: str = "") -> Any:
    """`extends` and `defaults`: mappings merge key by key; `steps` merge by step id; an
    option given as a plain value sets the default of the option it overrides, and one given
    as null is dropped; anything else replaces."""
    if isinstance(base, LocatedDict) and isinstance(override, LocatedDict):
        merged = LocatedDict({**base, **override})
        merged.place = override.place
        merged.key_places = {**base.key_places, **override.key_places}
        for key in base.keys() & override.keys():
            merged[key] = _merge(base[key], override[key], at=f"{at}.{key}" if at else str(key))
        if at == "options":  # `name: null` drops an inherited option the scorer has no use for
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
        return option
    return override


def _merge_steps(base: LocatedList, override: LocatedList) -> LocatedList:
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
            raise validation_error(exc, data, "", self.path) from None
        self.scorers: Mapping[str, Any] = data["scorers"]
        folder = self.path.parent
        self.templates_path: list[Path] = [folder / self.file.prompts, *(fallback.templates_path if fallback else [])]
        self.schemas_path: list[Path] = [folder / self.file.schemas, *(fallback.schemas_path if fallback else [])]
        self.own_defaults: Any = data.get("defaults") or _empty_like(data)
        # A scorer written here starts from the built-in defaults, then this file's.
        self.defaults: Any = _merge(fallback.defaults, self.own_defaults) if fallback else self.own_defaults
        self._resolved: dict[str, Any] | None = None

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
            raise ConfigError(f"scorers.{scorer_id}: extends itself", *locate(self.scorers, [scorer_id]))
        base = inherited[base_id] if base_id == scorer_id else self.raw_definition(str(base_id), (*seen, scorer_id))
        merged = _merge(_merge(base, self.own_defaults), raw)
        del merged["extends"]
        if "abstract" not in raw:  # a scorer built on an abstract base is concrete unless it says otherwise
            merged.pop("abstract", None)
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
    empty.place = getattr(data, "place", ("", 1))
    empty.key_places = {}
    return empty

"""Safe YAML loading that remembers where every mapping key came from, so that a
validation error deep inside a definition can be reported as FILE:LINE."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from .errors import ConfigError


#: (file, 1-based line). Kept per key and per item, not per container, because `extends`
#: merges a base scorer from one file with overrides from another.
Place = tuple[str, int]


class LocatedDict(dict):
    """A dict from YAML that knows where it and each of its keys were written."""

    place: Place
    key_places: dict[Any, Place]


class LocatedList(list):
    """A list from YAML that knows where it and each of its items were written."""

    place: Place
    item_places: list[Place]


class _LocatingLoader(yaml.SafeLoader):
    """SafeLoader (no arbitrary Python objects) that records line numbers."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> LocatedDict:  # type: ignore[override]
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

    def construct_sequence(self, node: yaml.SequenceNode, deep: bool = False) -> LocatedList:  # type: ignore[override]
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

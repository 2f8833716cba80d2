"""Where in a catalog's data one of pydantic's problems is: its location as a path through
the YAML (the tags pydantic adds for a tagged union dropped), and the key a validator's
message names; read by source.py, which places the problem at its line."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def key_named(data: Any, loc: Sequence[Any], message: str) -> str | None:
    """The key of the mapping at `loc` that a validator's message starts by naming
    (`aggregate: majority needs a threshold`), when the mapping has it."""
    node = data
    for part in loc:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    key = message.split(": ", 1)[0] if ": " in message else None
    return key if isinstance(node, Mapping) and key in node else None


#: pydantic's errors for a value that is not a number, said in an author's words.
NUMBER_ERRORS = {"float_parsing": "a number", "float_type": "a number", "int_parsing": "a whole number", "int_type": "a whole number"}


def data_loc(data: Any, loc: Sequence[Any]) -> list[Any]:
    """A pydantic error location as a path in the data: the tags pydantic adds for a tagged
    union (a step's `kind`) are dropped."""
    path: list[Any] = []
    node = data
    for index, part in enumerate(loc):
        if isinstance(node, Mapping) and isinstance(part, str) and node.get("kind") == part:
            following = loc[index + 1] if index + 1 < len(loc) else None
            # the tag, unless it is also a key the rest of the location goes through (a score step's `score:`)
            if part not in node or not (isinstance(node[part], Mapping) and following in node[part]):
                continue
        if isinstance(node, Mapping) and isinstance(part, str) and part not in node and index + 1 < len(loc) and part[:1].isupper():
            continue  # the member of a union pydantic tried (`ReducerSpec` of a score value)
        path.append(part)
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            node = None
    return path

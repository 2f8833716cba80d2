"""YAML's own surprises: plain values that YAML (1.1, as PyYAML reads it) takes for something
else than an author reading the file sees. `no` (Norway's language code) and `on` are
booleans, `010` is the octal number 8, `1:30` is 90 (minutes and seconds), and `1e3` is the
text '1e3' (a number needs a dot: `1.0e3`).

Where such a value makes a problem (a string option whose default is false), the problem
says why; where it changes a number without any problem (`010`, `1:30`), `scorers check`
warns at its place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml

from ..errors import ConfigError

_BOOLEAN, _INTEGER, _FLOAT, _TEXT = (f"tag:yaml.org,2002:{name}" for name in ("bool", "int", "float", "str"))
_EXPONENT = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)[eE][-+]?\d+")
_OCTAL = re.compile(r"[-+]?0[0-7]+")


@dataclass(frozen=True)
class Surprise:
    """A plain value YAML reads otherwise than it looks: where (1-based line and column of its
    text), the text, what YAML makes of it and what to write instead. `silent`: it loads
    without a problem anywhere, only as another number."""

    line: int
    column: int
    text: str
    means: str
    instead: str
    silent: bool

    def explained(self) -> str:
        return f"YAML reads `{self.text}` as {self.means}: {self.instead}"


def surprise(node: yaml.Node) -> Surprise | None:
    """What is surprising in a scalar as written, if anything."""
    if not isinstance(node, yaml.ScalarNode) or node.style:
        return None
    text, tag = node.value, node.tag
    line, column = node.start_mark.line + 1, node.start_mark.column + 1
    if tag == _BOOLEAN and text.lower() not in ("true", "false"):
        meant = "true" if text.lower() in ("yes", "y", "on") else "false"
        return Surprise(line, column, text, f"the boolean {meant}", f"quote it ('{text}') for the text", silent=False)
    if tag == _INTEGER and _OCTAL.fullmatch(text):
        return Surprise(line, column, text, f"{int(text, 8)}, an octal number (it starts with 0)", f"write {int(text, 10)}, or quote it ('{text}') for the text", silent=True)
    if tag in (_INTEGER, _FLOAT) and ":" in text:
        return Surprise(line, column, text, f"{yaml.safe_load(text)}, a number in base 60 (as minutes and seconds)", f"quote it ('{text}') for the text", silent=True)
    if tag == _TEXT and _EXPONENT.fullmatch(text):
        mantissa, exponent = re.split("[eE]", text)
        return Surprise(line, column, text, f"the text '{text}', not a number", f"write {mantissa if '.' in mantissa else mantissa + '.0'}e{exponent} (YAML's numbers need a dot)", silent=False)
    return None


#: The surprises of each YAML file as last loaded, by path: for the problems found in it later.
_FOUND: dict[str, tuple[Surprise, ...]] = {}


def remember(path: str, found: list[Surprise]) -> None:
    if found:
        if len(_FOUND) >= 1024:
            _FOUND.clear()  # a long-lived process reading many drafts (the workbench) does not grow
        _FOUND[path] = tuple(found)
    else:
        _FOUND.pop(path, None)


def surprises_in(path: str) -> tuple[Surprise, ...]:
    return _FOUND.get(path, ())


def explained(problem: ConfigError) -> ConfigError:
    """`problem`, saying why when it is at a value YAML read otherwise than it looks."""
    if problem.path is None or problem.line is None:
        return problem
    for found in _FOUND.get(problem.path, ()):
        if found.line == problem.line and (problem.column is None or found.column <= problem.column <= found.column + len(found.text)):
            if found.explained() not in problem.message:
                return ConfigError(f"{problem.message}; {found.explained()}", problem.path, problem.line, problem.column)
    return problem

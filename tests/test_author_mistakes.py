"""Mistakes a new scorer author makes, each reported where it was made (issue 19): YAML
indentation, optional options, divisions by a count that can be zero, a scorer replacing
another, thresholds off the score's scale, enum values the prompt never explains, and the
wording of the messages that name them."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import ConfigError, load_scorers


def write(folder: Path, text: str, name: str = "catalog.yaml") -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def problem(path: Path) -> str:
    with pytest.raises(ConfigError) as caught:
        load_scorers(path)
    return str(caught.value).replace(str(path.parent) + "/", "")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "scorers:\n  a:\n    name: A\n     description: one space too far\n",
            "catalog.yaml:4:6: invalid YAML: wrong indentation: this key is indented further than the keys above it, inside a value",
        ),
        (
            "scorers:\n  a:\n    name: A\n    description: Ratio: high\n",
            "catalog.yaml:4:23: invalid YAML: mapping values are not allowed here: a value holding ': ' must be quoted",
        ),
        (
            "scorers:\n  a:\n    name: A\n   description: one space too few\n",
            "catalog.yaml:4:4: invalid YAML: wrong indentation: this line lines up with no key or item of the mapping that starts at line 2",
        ),
    ],
)
def test_yaml_indentation_is_reported_at_the_line_indented_wrongly(tmp_path: Path, text: str, expected: str) -> None:
    assert problem(write(tmp_path, text)).startswith(expected)

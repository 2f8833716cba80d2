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


OPTIONAL = """\
scorers:
  word-limit:
    name: Word limit
    description: 1 when the output has at most `limit` words, or when there is no limit.
    direction: higher_is_better
    options:
      limit:
        {limit}
    steps:
      - id: count
        kind: compute
        values:
          words: "words(output) | length"
      - id: score
        kind: score
        score: "(1 if options.limit is none or count.words <= options.limit else 0) * options.scale"
"""


@pytest.mark.parametrize(
    "limit",
    [
        '{type: [integer, "null"], minimum: 1}',
        '{anyOf: [{type: integer, minimum: 1}, {type: "null"}], default: null}',
        "{type: integer, minimum: 1}",  # absent: null until given
    ],
)
def test_an_option_may_be_null(tmp_path: Path, limit: str) -> None:
    catalog = load_scorers(write(tmp_path, OPTIONAL.replace("{limit}", limit)))
    assert catalog.create("word-limit").run(output="one two three").score == 1
    assert catalog.create("word-limit", options={"limit": None}).run(output="one two three").score == 1
    assert catalog.create("word-limit", options={"limit": 2}).run(output="one two three").score == 0
    with pytest.raises(Exception, match="greater than or equal to 1"):
        catalog.create("word-limit", options={"limit": 0})


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        ("{oneOf: [{type: integer}, {type: \"null\"}]}", "catalog.yaml:8:10: `oneOf` is not supported; a value that may be null is written"),
        ("{anyOf: [{type: integer}, {type: string}]}", "catalog.yaml:8:10: `anyOf` is supported only for a value that may be null"),
        ("{type: integer, default: null}", 'catalog.yaml:8:34: scorers.word-limit.options.limit.default: Input should be a valid integer; an option that may be null is written `type: [TYPE, "null"]`'),
    ],
)
def test_an_unsupported_union_is_refused_at_its_place(tmp_path: Path, limit: str, expected: str) -> None:
    assert problem(write(tmp_path, OPTIONAL.replace("{limit}", limit))).startswith(expected)

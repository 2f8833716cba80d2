"""`option_rules` and `abstract`: checks across a scorer's options that no single option
schema can express ("give one of these two"), made at load time against the defaults and at
creation against the options given; an abstract base is only checked when it is created."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import engine
from engine import ConfigError
from engine.testing import JudgeServer

MODEL = "openai/test-model"

BASE = """\
scorers:
  counted:
    name: Counted
    description: Counts claims, capped by one of two options.
    direction: higher_is_better
    {abstract}
    options:
      cap: {{type: integer}}
      fallback_cap: {{type: integer}}
    option_rules:
      - check: "options.cap or options.fallback_cap"
        message: "set `cap` or `fallback_cap` (got {{{{ options.cap }}}} and {{{{ options.fallback_cap }}}})"
    steps:
      - id: claims
        kind: llm
        prompt: claims/extract.j2
        schema: claims.yaml
      - id: score
        kind: score
        score: "[claims.claims | length, options.cap or options.fallback_cap] | min"
"""


def catalog_file(tmp_path: Path, abstract: str = "", extra: str = "") -> Path:
    """The base catalog, optionally abstract, with `extra` scorers appended under `scorers:`."""
    path = tmp_path / "catalog.yaml"
    path.write_text(BASE.format(abstract=abstract) + textwrap.indent(textwrap.dedent(extra), "  "), encoding="utf-8")
    return path


def test_a_concrete_scorer_whose_defaults_break_a_rule_fails_to_load(tmp_path: Path) -> None:
    path = catalog_file(tmp_path)

    with pytest.raises(ConfigError, match=r"scorers.counted: options: set `cap` or `fallback_cap` \(got None and None\)") as raised:
        engine.load_scorers(path)
    assert (raised.value.path, raised.value.line) == (str(path), 2)


def test_an_abstract_scorer_is_checked_when_created(judge: JudgeServer, tmp_path: Path) -> None:
    catalog = engine.load_scorers(catalog_file(tmp_path, abstract="abstract: true"))

    with pytest.raises(ConfigError, match="counted: options: set `cap` or `fallback_cap`"):
        catalog.create("counted", MODEL)

    judge.on("Claims", {"claims": ["a", "b", "c"]})
    assert catalog.create("counted", MODEL, options={"fallback_cap": 2}).run("a. b. c.").score == 2


def test_abstract_is_not_inherited_by_a_scorer_that_extends_it(tmp_path: Path) -> None:
    completed = """\
      capped:
        extends: counted
        options:
          cap: {default: 1}
    """
    catalog = engine.load_scorers(catalog_file(tmp_path, abstract="abstract: true", extra=completed))
    assert catalog.definition("capped").abstract is False

    forgotten = """\
      uncapped:
        extends: counted
        name: Uncapped
    """
    with pytest.raises(ConfigError, match="scorers.uncapped: options: set `cap`") as raised:
        engine.load_scorers(catalog_file(tmp_path, abstract="abstract: true", extra=forgotten))
    assert raised.value.line == 21  # `uncapped:` in the host file

    still_abstract = """\
      another_base:
        extends: counted
        abstract: true
    """
    engine.load_scorers(catalog_file(tmp_path, abstract="abstract: true", extra=still_abstract))


def test_a_broken_option_rule_is_reported_at_load_time(tmp_path: Path) -> None:
    path = tmp_path / "catalog.yaml"
    path.write_text(BASE.format(abstract="abstract: true").replace('"options.cap or options.fallback_cap"', '"options.cap or ("'), encoding="utf-8")

    with pytest.raises(ConfigError, match="invalid expression") as raised:
        engine.load_scorers(path)
    assert (raised.value.line, raised.value.column) == (11, 32)  # the `check:` itself, at its unclosed bracket

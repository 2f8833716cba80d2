"""Literal text that names something else than meant (engine/catalog/literal_text.py), beside
the broken catalogs of tests/test_check_meaning.py: what stays quiet, and the built-in
catalog's own codes, which `scorers check` of the built-in catalog does not read (it has no
author's file to point into, and the language tables are loaded only for a host catalog)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.catalog import builtin_catalog
from engine.catalog.literal_text import wrong_codes
from engine.cli import app

runner = CliRunner()


def test_the_built_in_catalogs_language_codes_and_models_name_what_they_mean() -> None:
    source = builtin_catalog().source
    for scorer_id in source.scorers:
        raw = source.raw_definition(scorer_id)
        assert list(wrong_codes(raw, source.scorers[scorer_id], f"scorers.{scorer_id}")) == [], scorer_id


CATALOG = """\
scorers:
  korean-keywords:
    extends: keyword-coverage
    name: Korean keyword coverage
    description: "Share of the input's Korean keywords the output covers.\\tA tab in prose is fine."
    options:
      language: {language}
    judge:
      model: {model}
"""


@pytest.mark.parametrize(
    ("language", "model", "expected"),
    [
        ("ko", "openrouter/anthropic/claude-3-5-haiku", []),  # a prefix serving many makers' models is not read
        ("Korean", "openai/gpt-4o-mini", []),  # a language's name is a language
        ("kor", "anthropic/claude-3-5-haiku-latest", ["catalog.yaml:7:17: warning: scorers.korean-keywords.options.language: 'kor' is not an ISO 639-1 code (two letters): Korean is 'ko' [language-code]"]),
        ("xx", "openai/claude-3-haiku", [
            "catalog.yaml:7:17: warning: scorers.korean-keywords.options.language: 'xx' is no language this engine knows: write an ISO 639-1 code (two letters, e.g. 'en' for English) [language-code]",
            "catalog.yaml:9:14: warning: scorers.korean-keywords.judge.model: claude-3-haiku is a model of anthropic, not one openai serves: write anthropic/claude-3-haiku (or the prefix of the service that hosts it) [model-provider]",
        ]),
    ],
)
def test_codes_are_read_against_what_they_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, language: str, model: str, expected: list[str]) -> None:
    (tmp_path / "catalog.yaml").write_text(CATALOG.format(language=language, model=model), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["check", "catalog.yaml"])
    assert (result.exit_code, result.stdout.splitlines()) == (0, expected)

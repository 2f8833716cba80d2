"""A catalog's `defaults:` block: what every scorer of the file starts from, so each scorer
holds only what is its own; and options overridden by a plain value under `extends:`."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from engine import ConfigError, builtin_catalog, load_scorers
from engine.testing import JudgeServer

SENTENCES_SCHEMA = """\
title: Sentences
type: object
properties:
  sentences: {type: array, items: {type: object, properties: {text: {type: string}, polite: {type: boolean}}, required: [text, polite]}}
required: [sentences]
"""

POLITENESS_STEPS = """\
    steps:
      - id: judge_sentences
        kind: llm
        prompt: politeness.j2
        schema: sentences.yaml
      - id: score
        kind: score
        values:
          polite: {reduce: ratio, items: judge_sentences.sentences, where: "item.polite", empty: 1}
        score: "polite * options.scale"
"""


def catalog(tmp_path: Path, text: str) -> Path:
    (tmp_path / "prompts").mkdir(exist_ok=True)
    (tmp_path / "schemas").mkdir(exist_ok=True)
    (tmp_path / "prompts/politeness.j2").write_text("{{ output | untrusted('output') }}\n", encoding="utf-8")
    (tmp_path / "schemas/sentences.yaml").write_text(SENTENCES_SCHEMA, encoding="utf-8")
    path = tmp_path / "catalog.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_scorers_take_the_judge_and_options_of_the_defaults_block(tmp_path: Path, judge: JudgeServer) -> None:
    path = catalog(tmp_path, textwrap.dedent("""\
        defaults:
          judge:
            model: openai/house-judge
            temperature: 0.3
          options:
            strictness: {type: integer, default: 2}
        scorers:
          politeness:
            name: Politeness
            description: Share of polite sentences.
            direction: higher_is_better
        """) + POLITENESS_STEPS)
    judge.on("Sentences", {"sentences": [{"text": "Thanks!", "polite": True}]})
    scorer = load_scorers(path).create("politeness", options={"scale": 10, "strictness": 3})
    result = scorer.run(output="Thanks!")
    assert result.score == 10  # `scale` comes from the built-in defaults, which every catalog starts from
    (request,) = judge.requests
    assert request.body["model"] == "house-judge" and request.body["temperature"] == 0.3
    assert request.system.startswith("You are a careful, impartial evaluator")  # the built-in system partial
    assert scorer.options.model_dump()["strictness"] == 3


def test_a_scorer_s_own_keys_win_over_the_defaults_key_by_key(tmp_path: Path, judge: JudgeServer) -> None:
    path = catalog(tmp_path, textwrap.dedent("""\
        defaults:
          judge: {model: openai/house-judge, temperature: 0.3}
        scorers:
          politeness:
            name: Politeness
            description: Share of polite sentences.
            direction: higher_is_better
            judge: {temperature: 0}
            options:
              scale: {default: 5}
        """) + POLITENESS_STEPS)
    judge.on("Sentences", {"sentences": [{"text": "Go away.", "polite": False}, {"text": "Thanks!", "polite": True}]})
    result = load_scorers(path).create("politeness").run(output="Go away. Thanks!")
    assert result.score == 2.5
    (request,) = judge.requests
    assert request.body["model"] == "house-judge" and request.body["temperature"] == 0


def test_an_option_overridden_by_a_plain_value_under_extends_sets_its_default(tmp_path: Path, judge: JudgeServer) -> None:
    path = catalog(tmp_path, textwrap.dedent("""\
        scorers:
          polite-reply:
            extends: criteria
            name: Polite reply
            options:
              criteria: "The reply is polite."
              scale: 10
        """))
    plan = load_scorers(path).plan("polite-reply")
    defaults = plan.options_model().model_dump()
    assert defaults["criteria"] == "The reply is polite." and defaults["scale"] == 10
    # the option keeps its schema: a wrong type is still refused
    with pytest.raises(ConfigError, match="option scale"):
        load_scorers(path).create("polite-reply", model="openai/m", options={"scale": "big"})


def test_a_mistake_in_the_defaults_block_names_its_own_line(tmp_path: Path) -> None:
    path = catalog(tmp_path, textwrap.dedent("""\
        defaults:
          judge:
            model: openai/house-judge
            temprature: 0.3
        scorers: {}
        """))
    with pytest.raises(ConfigError) as error:
        load_scorers(path)
    assert str(error.value).startswith(f"{path}:4:5: defaults.judge.temprature: unknown key 'temprature'; did you mean 'temperature'?")


def test_the_built_in_catalog_writes_shared_settings_once() -> None:
    text = (Path(__file__).resolve().parent.parent / "scorers.yaml").read_text(encoding="utf-8")
    assert text.count("model: openai/gpt-4o-mini") == 1
    assert text.count("The maximum score.") == 1
    for scorer_id in builtin_catalog().ids():
        plan = builtin_catalog().plan(scorer_id)
        assert "scale" in plan.options_model.model_fields, scorer_id
        if plan.needs_judge:  # the judge writes the reason in it
            assert "language" in plan.options_model.model_fields, scorer_id


def test_a_scorer_drops_an_inherited_option_it_has_no_use_for_by_setting_it_to_null(tmp_path: Path) -> None:
    path = catalog(tmp_path, textwrap.dedent("""\
        scorers:
          politeness:
            name: Politeness
            description: Share of polite sentences.
            direction: higher_is_better
            options:
              language: null
        """) + POLITENESS_STEPS)
    plan = load_scorers(path).plan("politeness")
    assert list(plan.options_model.model_fields) == ["scale"]
    with pytest.raises(ConfigError, match=r"option language: unknown option \(known: context, get_context, scale\)"):
        load_scorers(path).create("politeness", model="openai/m", options={"language": "ko"})
    assert "language" not in builtin_catalog().plan("includes").options_model.model_fields

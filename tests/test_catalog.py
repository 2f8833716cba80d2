"""Catalogs: loading host catalogs, `extends`, shadowing, and errors that name FILE:LINE."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from engine import ConfigError, builtin_catalog, create_scorer, load_scorers
from engine.testing import JudgeServer

MINIMAL_SCORER = """\
prompts: prompts
schemas: schemas
scorers:
  politeness:
    name: Politeness
    description: Share of sentences the judge finds polite.
    direction: higher_is_better
    options:
      scale: {type: number, default: 1, exclusiveMinimum: 0}
    judge:
      model: openai/test-judge
    steps:
      - id: judge_sentences
        kind: llm
        prompt: politeness.j2
        schema: sentences.yaml
        skip_if: "not (output | trim)"
        on_skip: {sentences: []}
      - id: score
        kind: score
        values:
          polite: {reduce: ratio, items: judge_sentences.sentences, where: "item.polite", empty: 1}
        score: "polite * options.scale"
"""

SENTENCES_SCHEMA = """\
title: Sentences
type: object
properties:
  sentences:
    type: array
    items:
      type: object
      properties:
        text: {type: string}
        polite: {type: boolean}
      required: [text, polite]
required: [sentences]
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root / "catalog.yaml"


@pytest.fixture
def host(tmp_path: Path) -> dict[str, str]:
    return {
        "catalog.yaml": MINIMAL_SCORER,
        "prompts/politeness.j2": "Judge each sentence for politeness.\n{{ output | untrusted('output') }}\n",
        "schemas/sentences.yaml": SENTENCES_SCHEMA,
    }


def test_a_host_catalog_defines_a_scorer_in_yaml_alone(tmp_path: Path, host: dict[str, str], judge: JudgeServer) -> None:
    judge.on("Sentences", {"sentences": [{"text": "Thanks!", "polite": True}, {"text": "Go away.", "polite": False}]})
    catalog = load_scorers(write(tmp_path, host))
    assert catalog.ids()[0] == "politeness" and "hallucination" in catalog.ids()
    result = catalog.create("politeness", options={"scale": 10}).run(output="Thanks! Go away.")
    assert result.score == 5
    assert judge.requests[0].body["model"] == "test-judge"
    assert result.reason is None


def test_host_prompts_shadow_built_in_templates(tmp_path: Path, judge: JudgeServer) -> None:
    path = write(
        tmp_path,
        {
            "catalog.yaml": "scorers: {}\n",
            "prompts/claims/extract.j2": "{% import 'partials/blocks.j2' as blocks %}OUR OWN WORDING\n{{ output | untrusted('output') }}\n",
        },
    )
    judge.on("Claims", {"claims": []})
    load_scorers(path).create("hallucination", options={"context": ["c"]}).run(output="Some text.")
    assert judge.requests[0].prompt.startswith("OUR OWN WORDING")


def test_extends_overrides_a_prompt_and_an_option_default_without_copying(tmp_path: Path, judge: JudgeServer) -> None:
    path = write(
        tmp_path,
        {
            "catalog.yaml": """\
                scorers:
                  strict-hallucination:
                    extends: hallucination
                    name: Strict hallucination
                    options:
                      scale: {default: 100}
                    judge:
                      reasks: 0
                    steps:
                      - id: analyze
                        prompt: strict_analyze.j2
                """,
            "prompts/strict_analyze.j2": "STRICT: {{ preprocess.claims | json }} vs {{ context | json }}\n",
        },
    )
    judge.on("Claims", {"claims": ["a", "b"]})
    judge.on("HallucinationVerdicts", {"verdicts": [{"statement": "a", "verdict": "yes", "reason": "r"}, {"statement": "b", "verdict": "no", "reason": "r"}]})
    judge.on("Reason", {"reason": "r"})
    catalog = load_scorers(path)
    definition = catalog.definition("strict-hallucination")
    assert definition.name == "Strict hallucination"
    assert [step.id for step in definition.steps] == ["preprocess", "analyze", "score", "generate_reason"]
    result = catalog.create("strict-hallucination", options={"context": ["ctx"]}).run(output="x")
    assert result.score == 50
    assert result.analyze_prompt == 'STRICT: ["a", "b"] vs ["ctx"]'
    # the built-in is unchanged
    assert builtin_catalog().definition("hallucination").steps[1].prompt == "hallucination/analyze.j2"


def test_definition_hash_changes_with_a_template(tmp_path: Path, host: dict[str, str]) -> None:
    first = load_scorers(write(tmp_path, host)).plan("politeness").fingerprint
    (tmp_path / "prompts/politeness.j2").write_text("Other wording {{ output | untrusted('output') }}")
    second = load_scorers(tmp_path / "catalog.yaml").plan("politeness").fingerprint
    assert first != second


def test_unknown_scorer_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown scorer 'halucination'; did you mean 'hallucination'\? known scorers: .*faithfulness"):
        create_scorer("halucination")


def error_for(tmp_path: Path, files: dict[str, str]) -> str:
    with pytest.raises(ConfigError) as caught:
        load_scorers(write(tmp_path, files))
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_broken_yaml_names_file_and_line(tmp_path: Path, host: dict[str, str]) -> None:
    host["catalog.yaml"] = MINIMAL_SCORER.replace("direction: higher_is_better", "direction: [higher")
    message = error_for(tmp_path, host)
    # Reported where the bracket was opened, not two lines later where the parser gave up.
    assert message == f"{tmp_path / 'catalog.yaml'}:7:16: invalid YAML: a flow sequence opened here is not closed (expected ',' or ']', but got ':' at line 8)"


def test_a_misspelt_step_field_names_its_line(tmp_path: Path, host: dict[str, str]) -> None:
    host["catalog.yaml"] = MINIMAL_SCORER.replace("        schema: sentences.yaml", "        shema: sentences.yaml")
    message = error_for(tmp_path, host)
    assert message.startswith(f"{tmp_path / 'catalog.yaml'}:16:9: scorers.politeness.steps.0.shema: unknown key 'shema'; did you mean 'schema'?")


def test_a_wrong_direction_names_its_line(tmp_path: Path, host: dict[str, str]) -> None:
    host["catalog.yaml"] = MINIMAL_SCORER.replace("direction: higher_is_better", "direction: up")
    assert error_for(tmp_path, host).startswith(f"{tmp_path / 'catalog.yaml'}:7:16: scorers.politeness.direction: Input should be")


def test_a_bad_option_default_names_its_line(tmp_path: Path, host: dict[str, str]) -> None:
    host["catalog.yaml"] = MINIMAL_SCORER.replace("default: 1, exclusiveMinimum: 0", "default: 0, exclusiveMinimum: 0")
    assert error_for(tmp_path, host).startswith(f"{tmp_path / 'catalog.yaml'}:9:38: scorers.politeness.options.scale.default: Input should be greater than 0")


def test_template_syntax_errors_name_the_template_and_line(tmp_path: Path, host: dict[str, str]) -> None:
    host["prompts/politeness.j2"] = "line one\n{% if output %}\nno endif\n"
    message = error_for(tmp_path, host)
    assert message.startswith(f"{tmp_path / 'prompts/politeness.j2'}:")
    assert "template syntax error" in message


def test_unknown_template_variables_are_caught_at_load_time(tmp_path: Path, host: dict[str, str]) -> None:
    host["prompts/politeness.j2"] = "Judge this.\n{{ ouput | untrusted('output') }}\n"
    message = error_for(tmp_path, host)
    assert message.startswith(f"{tmp_path / 'prompts/politeness.j2'}:2:4: politeness.judge_sentences: unknown name 'ouput'; did you mean 'output'?")


def test_context_in_a_step_that_does_not_declare_it_is_explained(tmp_path: Path, host: dict[str, str]) -> None:
    host["prompts/politeness.j2"] = "{{ context }}\n"
    assert "needs `uses_context: true`" in error_for(tmp_path, host)


def test_missing_template_and_schema_are_named(tmp_path: Path, host: dict[str, str]) -> None:
    del host["prompts/politeness.j2"]
    assert "template 'politeness.j2' not found" in error_for(tmp_path, host)


def test_schema_errors_name_the_schema_file_and_line(tmp_path: Path, host: dict[str, str]) -> None:
    host["schemas/sentences.yaml"] = SENTENCES_SCHEMA.replace("polite: {type: boolean}", "polite: {type: bool}")
    message = error_for(tmp_path, host)
    assert message.startswith(f"{tmp_path / 'schemas/sentences.yaml'}:10:24: unsupported type 'bool'; did you mean 'boolean'?")


def test_yes_no_enums_must_be_quoted(tmp_path: Path, host: dict[str, str]) -> None:
    host["schemas/sentences.yaml"] = SENTENCES_SCHEMA.replace("polite: {type: boolean}", "polite: {type: string, enum: [yes, no]}")
    assert "every `enum` value must be a string" in error_for(tmp_path, host)


def test_on_skip_must_fit_the_schema(tmp_path: Path, host: dict[str, str]) -> None:
    host["catalog.yaml"] = MINIMAL_SCORER.replace("on_skip: {sentences: []}", "on_skip: {sentence: []}")
    message = error_for(tmp_path, host)
    assert message.startswith(f"{tmp_path / 'catalog.yaml'}:18:18: politeness.judge_sentences.on_skip does not fit")


def test_bad_expressions_are_caught_at_load_time(tmp_path: Path, host: dict[str, str]) -> None:
    host["catalog.yaml"] = MINIMAL_SCORER.replace('score: "polite * options.scale"', 'score: "polite * * options.scale"')
    message = error_for(tmp_path, host)
    assert message.startswith(f"{tmp_path / 'catalog.yaml'}:23:24: politeness.score.score: invalid expression: unexpected '*'")


def test_two_score_steps_are_refused(tmp_path: Path, host: dict[str, str]) -> None:
    host["catalog.yaml"] = MINIMAL_SCORER + "      - {id: again, kind: score, score: '1'}\n"
    assert "exactly one step of kind 'score'" in error_for(tmp_path, host)


def test_extends_of_an_unknown_step_is_refused(tmp_path: Path) -> None:
    message = error_for(tmp_path, {"catalog.yaml": "scorers:\n  x:\n    extends: hallucination\n    steps:\n      - id: analyse\n        prompt: p.j2\n"})
    assert message.startswith(f"{tmp_path / 'catalog.yaml'}:5: extends: 'analyse' is not a step of the base scorer")


def test_extends_cycles_are_refused(tmp_path: Path) -> None:
    message = error_for(tmp_path, {"catalog.yaml": "scorers:\n  a: {extends: b}\n  b: {extends: a}\n"})
    assert message.startswith(f"{tmp_path / 'catalog.yaml'}:2:16: scorers.a.extends: cycle b -> a -> b")


def test_yaml_python_tags_are_refused(tmp_path: Path) -> None:
    message = error_for(tmp_path, {"catalog.yaml": "scorers: !!python/object/apply:os.system ['echo owned']\n"})
    assert "invalid YAML" in message and "python/object" in message


def test_templates_cannot_reach_python_internals(tmp_path: Path, host: dict[str, str], judge: JudgeServer) -> None:
    host["prompts/politeness.j2"] = "{{ output.__class__.__mro__[1].__subclasses__() }}\n"
    # Refused when the catalog loads, not only when rendering.
    message = error_for(tmp_path, host)
    assert message.startswith(f"{tmp_path / 'prompts/politeness.j2'}:1:11: politeness.judge_sentences: attribute '__class__' is not allowed")
    assert judge.requests == []


def test_places_in_a_merged_definition_name_the_file_each_key_came_from(tmp_path: Path) -> None:
    from engine.catalog.source import _merge, load_yaml, locate

    (tmp_path / "base.yaml").write_text("name: Base\njudge:\n  model: openai/a\n  temperature: 0\nsteps:\n  - id: one\n    prompt: a.j2\n  - id: two\n    prompt: b.j2\n")
    (tmp_path / "host.yaml").write_text("\n\nname: Host\nsteps:\n  - id: two\n    prompt: c.j2\n")
    merged = _merge(load_yaml(tmp_path / "base.yaml"), load_yaml(tmp_path / "host.yaml"))
    assert locate(merged, ["name"]) == (str(tmp_path / "host.yaml"), 3)
    assert locate(merged, ["judge"]) == (str(tmp_path / "base.yaml"), 2)
    assert locate(merged, ["judge", "temperature"]) == (str(tmp_path / "base.yaml"), 4)
    assert locate(merged, ["steps", 0, "prompt"]) == (str(tmp_path / "base.yaml"), 7)
    assert locate(merged, ["steps", 1, "prompt"]) == (str(tmp_path / "host.yaml"), 6)

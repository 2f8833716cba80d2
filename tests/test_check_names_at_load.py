"""Names are checked when a catalog loads, before any judge call: `run` and `preview` refuse a
broken catalog with every problem listed; a rule message is checked like a prompt; local
`$ref`s work; an item's metadata reaches templates and expressions; the score step's values
are in the result."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine import CatalogErrors, ConfigError, load_scorers, run_evals
from engine.cli import app
from engine.testing import JudgeServer

runner = CliRunner()
BROKEN = Path(__file__).resolve().parent / "broken_catalogs"


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root / "catalog.yaml"


RUBRIC_CATALOG = """\
scorers:
  rubric:
    replaces: true                  # the built-in rubric scorer has this id
    name: Rubric
    description: Whether the reply follows the item's own rubric.
    direction: higher_is_better
    steps:
      - id: judge
        kind: llm
        prompt: rubric.j2
        schema: verdict.yaml
        skip_if: "metadata.skip_judge is defined and metadata.skip_judge"
        on_skip: {verdicts: []}
      - id: score
        kind: score
        values:
          followed:
            reduce: ratio
            items: judge.verdicts
            where: "item.verdict == 'followed'"
            empty: 0
        score: "followed * (metadata.weight if metadata.weight is defined else 1)"
"""

RUBRIC_SCHEMA = """\
title: RubricVerdicts
type: object
$defs:
  Verdict:
    type: object
    properties:
      point: {type: string}
      verdict: {type: string, enum: [followed, ignored]}
    required: [point, verdict]
properties:
  verdicts:
    type: array
    items: {$ref: "#/$defs/Verdict"}
  worst:
    $ref: "#/$defs/Verdict"
required: [verdicts]
"""


@pytest.fixture
def rubric_catalog(tmp_path: Path) -> Path:
    return write(
        tmp_path,
        {
            "catalog.yaml": RUBRIC_CATALOG,
            "prompts/rubric.j2": 'Rubric: {{ metadata.rubric }}\n{{ output | untrusted("output") }}\n',
            "schemas/verdict.yaml": RUBRIC_SCHEMA,
        },
    )


def test_an_items_metadata_reaches_templates_and_expressions(rubric_catalog: Path, judge: JudgeServer) -> None:
    judge.on("RubricVerdicts", {"verdicts": [{"point": "brief", "verdict": "followed"}, {"point": "polite", "verdict": "IGNORED"}]})
    scorer = load_scorers(rubric_catalog).create("rubric")
    result = run_evals(
        data=[
            {"input": "q1", "output": "a1", "metadata": {"rubric": "Be brief and polite.", "weight": 10}},
            {"input": "q2", "output": "a2", "metadata": {"rubric": "Never mind.", "skip_judge": True}},
        ],
        scorers=[scorer],
    )
    assert [item.results["rubric"].score for item in result.items] == [5, 0]
    [asked] = judge.requests_for("RubricVerdicts")
    assert "Rubric: Be brief and polite." in asked.prompt


def test_a_local_ref_is_one_model_used_everywhere(rubric_catalog: Path) -> None:
    plan = load_scorers(rubric_catalog).plan("rubric")
    answer = plan.step("judge").answer_model  # type: ignore[union-attr]
    parsed = answer.model_validate({"verdicts": [{"point": "p", "verdict": "Followed "}], "worst": {"point": "q", "verdict": "ignored"}})
    assert parsed.verdicts[0].verdict == "followed"  # type: ignore[attr-defined]
    assert type(parsed.verdicts[0]) is type(parsed.worst)  # type: ignore[attr-defined]


def test_metadata_on_the_command_line(rubric_catalog: Path, judge: JudgeServer) -> None:
    judge.on("RubricVerdicts", {"verdicts": [{"point": "brief", "verdict": "followed"}]})
    result = runner.invoke(app, ["run", "rubric", "--config", str(rubric_catalog), "--output", "ok", "--metadata", "{rubric: Be brief., weight: 3}", "--json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["score"] == 3
    # The score step's named values are part of the result, as every other step's result.
    assert shown["score_step_result"] == {"followed": 1.0, "score": 3.0}
    assert "Rubric: Be brief." in shown["judge_prompt"]


def test_run_and_preview_list_every_problem_before_any_judge_call(judge: JudgeServer) -> None:
    catalog = str(BROKEN / "several_problems" / "catalog.yaml")
    for command in (["run", "faithfulness", "--output", "x", "--context", "c"], ["preview", "faithfulness", "--output", "x"]):
        result = runner.invoke(app, [*command, "--config", catalog])
        assert result.exit_code == 2
        lines = result.stderr.splitlines()
        assert len(lines) == 3 and all(line.startswith(f"error: {BROKEN / 'several_problems' / 'catalog.yaml'}:") for line in lines)
        assert "'Yes' is never true" in lines[0] and "'halucinated'" in lines[1] and "default" in lines[2]
    assert judge.requests == []


def test_eval_checks_the_catalog_first(tmp_path: Path, judge: JudgeServer) -> None:
    data = tmp_path / "items.jsonl"
    data.write_text('{"input": "q", "output": "a", "context": ["c"]}\n', encoding="utf-8")
    catalog = str(BROKEN / "unknown_field_in_where" / "catalog.yaml")
    result = runner.invoke(app, ["eval", str(data), "--scorer", "claims-check", "--config", catalog, "--store", str(tmp_path / "r.sqlite")])
    assert result.exit_code == 2
    assert "item has no field 'verdcit'; did you mean 'verdict'?" in result.stderr
    assert judge.requests == [] and not (tmp_path / "r.sqlite").exists()


def test_load_scorers_raises_every_problem_at_once() -> None:
    with pytest.raises(CatalogErrors) as raised:
        load_scorers(BROKEN / "several_problems")
    assert [(problem.line, problem.column) for problem in raised.value.problems] == [(11, 37), (12, 17), (16, 38)]
    assert str(raised.value).endswith("(and 2 more problems; `scorers check` lists them all)")
    assert isinstance(raised.value, ConfigError)


def _one_step_catalog(tmp_path: Path, **fields: str) -> Path:
    values = {"where": "item.verdict == 'yes'", "score": "share * options.scale", "message": "Give {{ preprocess.claims | length }} verdicts."}
    values.update(fields)
    return write(tmp_path, {"catalog.yaml": f"""\
        scorers:
          x:
            name: X
            description: X.
            direction: lower_is_better
            requires: [output, context]
            steps:
              - id: preprocess
                kind: llm
                prompt: claims/extract.j2
                schema: claims.yaml
              - id: analyze
                kind: llm
                prompt: hallucination/analyze.j2
                schema: hallucination_verdicts.yaml
                uses_context: true
                rules:
                  - check: "verdicts | length == preprocess.claims | length"
                    message: "{values['message']}"
              - id: score
                kind: score
                values:
                  share: {{reduce: ratio, items: analyze.verdicts, where: "{values['where']}"}}
                score: "{values['score']}"
        """})


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"where": "item.verdict in ['yes', 'Unsure']"}, "item.verdict is one of 'yes', 'no': comparing it with 'Unsure' is never true"),
        ({"where": "item.verdict != 'nope'"}, "comparing it with 'nope' is always true; did you mean 'no'?"),
        ({"score": "{'yes': 1, 'No': 0}[analyze.verdicts[0].verdict]"}, "'No' is never a value of analyze.verdicts[0].verdict, which is one of 'yes', 'no'"),
        ({"score": "{'yes': 1}[analyze.verdicts[0].verdict]"}, "no entry for 'no'"),
        ({"score": "share * options.scale if preprocess.claims.size else 0"}, "preprocess.claims is a list: it has no field 'size'"),
        ({"score": "share | nosuchfilter"}, "unknown filter 'nosuchfilter'"),
        ({"score": "generate_reason"}, "unknown name 'generate_reason'"),
        ({"message": "{{ verdicts | length }} of {{ preprocess.claims | lenght }}"}, "unknown filter 'lenght'; did you mean 'length'?"),
        ({"message": "{{ verdicts.__class__ }}"}, "attribute '__class__' is not allowed"),
        ({"where": "item.verdict.upper() == 'YES' and item.reason.startswith('x')"}, None),
        ({"score": "(analyze.verdicts | selectattr('verdict', 'equalto', 'yes') | list | length) / ([1, preprocess.claims | length] | max)"}, None),
        ({"score": "share * options.scale", "message": "{% for claim in preprocess.claims %}{{ claim.text }}{% endfor %}"}, "claim is text: it has no field 'text'"),
    ],
)
def test_expression_checks(tmp_path: Path, fields: dict[str, str], problem: str | None) -> None:
    catalog = _one_step_catalog(tmp_path, **fields)
    if problem is None:
        load_scorers(catalog)
        return
    with pytest.raises(CatalogErrors) as raised:
        load_scorers(catalog)
    assert any(problem in str(found) for found in raised.value.problems), raised.value.problems


def test_a_rule_message_that_names_an_unknown_field_never_renders_a_silent_zero(tmp_path: Path) -> None:
    catalog = _one_step_catalog(tmp_path, message="There are {{ preprocess.claimz | length }} claims.")
    with pytest.raises(ConfigError, match=r"catalog.yaml:19:\d+: x.analyze rule 1 message: preprocess has no field 'claimz'; did you mean 'claims'\?"):
        load_scorers(catalog)


def test_a_compute_steps_values_are_known_to_the_steps_after_it(tmp_path: Path) -> None:
    catalog = write(tmp_path, {"catalog.yaml": """\
        scorers:
          coverage:
            name: Coverage
            description: Share of the input's keywords the output repeats.
            direction: higher_is_better
            requires: [output, input]
            steps:
              - id: measure
                kind: compute
                values:
                  wanted: "keywords(input)"
                  found: "wanted | select('in', keywords(output)) | list"
              - id: score
                kind: score
                score: "(measure.fonud | length) / (measure.wanted | length) if measure.wanted else 1"
        """})
    with pytest.raises(ConfigError, match=r"catalog.yaml:15:26: coverage.score.score: measure has no field 'fonud'; did you mean 'found'\?"):
        load_scorers(catalog)
    catalog.write_text(catalog.read_text(encoding="utf-8").replace("fonud", "found"), encoding="utf-8")
    assert load_scorers(catalog).create("coverage").run(output="Paris is the capital", input="capital of France").score == 0.5


def test_a_step_with_a_broken_prompt_still_lets_later_mistakes_be_found(tmp_path: Path) -> None:
    catalog = _one_step_catalog(tmp_path, where="item.verdcit == 'yes'")
    text = catalog.read_text(encoding="utf-8").replace("prompt: hallucination/analyze.j2", "prompt: analyze.j2")
    catalog.write_text(text, encoding="utf-8")
    write(tmp_path, {"prompts/analyze.j2": "{% include 'partials/missing.j2' %}\n{{ output }}\n"})
    with pytest.raises(CatalogErrors) as raised:
        load_scorers(catalog)
    found = [(Path(problem.path or "").name, problem.line, problem.message.split(": ", 1)[1][:40]) for problem in raised.value.problems]
    assert found == [
        ("catalog.yaml", 23, "item has no field 'verdcit'; did you mea"),
        ("analyze.j2", 1, "{% include %}: template 'partials/missin"),
    ]


def test_a_misspelt_schema_keyword_names_the_keyword_meant(tmp_path: Path) -> None:
    catalog = write(tmp_path, {
        "catalog.yaml": "scorers:\n  x:\n    extends: hallucination\n    steps:\n      - id: analyze\n        schema: v.yaml\n",
        "schemas/v.yaml": "type: object\nproperties:\n  verdicts:\n    type: array\n    items:\n      type: object\n      properties:\n        verdict: {type: string, enm: [\"yes\", \"no\"]}\n",
    })
    with pytest.raises(ConfigError, match=r"v.yaml:8:33: keyword 'enm' is not supported for type 'string'; did you mean 'enum'\?"):
        load_scorers(catalog)

"""Answers shaped by what came before (issue 35): a judge step's `bounds:` work out, per
request, how many items a list has and how long a string is from the item and the earlier
answers; the JSON schema sent and the validation of the answer carry the same values, and
the call's max_tokens follows from them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from engine import CatalogErrors, ConfigError, create_hallucination_scorer, load_scorers
from engine.cli import app
from engine.testing import JudgeServer

from helpers.scripted import between, numbered_claims, verdicts_on_claims

runner = CliRunner()
CONTEXT = ["The first iPhone was announced on January 9, 2007.", "It went on sale on June 29, 2007."]
OUTPUT = "The first iPhone was announced in 2007. It went on sale in 2008."


def sent_schema(judge: JudgeServer, name: str) -> dict[str, Any]:
    schema = judge.requests_for(name)[0].answer_schema
    assert schema is not None
    return schema


def test_the_verdicts_asked_for_are_exactly_one_per_claim_each_naming_its_claim(judge: JudgeServer) -> None:
    claims = ["The first iPhone was announced in 2007.", "It went on sale in 2008."]
    judge.on("Claims", {"claims": claims})
    judge.on("HallucinationVerdicts", verdicts_on_claims("no"))
    judge.on("Reason", {"reason": "r"})
    create_hallucination_scorer(options={"context": CONTEXT}).run(output=OUTPUT)

    verdicts = sent_schema(judge, "HallucinationVerdicts")["properties"]["verdicts"]
    assert (verdicts["minItems"], verdicts["maxItems"]) == (2, 2)
    assert verdicts["items"]["properties"]["statement"]["enum"] == claims
    assert verdicts["items"]["properties"]["reason"]["maxLength"] == 300
    extracted = sent_schema(judge, "Claims")["properties"]["claims"]
    longest = len("The first iPhone was announced in 2007.")
    assert (extracted["maxItems"], extracted["items"]["maxLength"]) == (2 + 2, 2 * longest + 40)  # two sentences
    # max_tokens follows: what the longest answer allowed takes, well under the step's 2048
    limits = [request.body["max_tokens"] for request in judge.requests]
    assert all(limit < 1024 for limit in limits), limits


def test_the_bounds_follow_the_output(judge: JudgeServer) -> None:
    judge.on("Claims", {"claims": ["a"]})
    judge.on("HallucinationVerdicts", verdicts_on_claims("no"))
    judge.on("Reason", {"reason": "r"})
    scorer = create_hallucination_scorer(options={"context": CONTEXT})
    scorer.run(output="One.")
    scorer.run(output="One. Two is here. Three. Four. Five.")
    first, second = (request.answer_schema for request in judge.requests_for("Claims"))
    assert first is not None and second is not None
    assert first["properties"]["claims"]["maxItems"] == 3 and second["properties"]["claims"]["maxItems"] == 7
    assert judge.requests_for("Claims")[0].body["max_tokens"] < judge.requests_for("Claims")[1].body["max_tokens"]


#: Answers just inside and just outside each bound of two verdicts on two claims.
ANSWERS = {
    "fits": ([("a", "yes", "r"), ("b", "no", "r")], True),
    "one verdict short": ([("a", "yes", "r")], False),
    "one verdict too many": ([("a", "yes", "r"), ("b", "no", "r"), ("a", "no", "r")], False),
    "a statement that is no claim": ([("a", "yes", "r"), ("c", "no", "r")], False),
    "a reason past its length": ([("a", "yes", "r" * 301), ("b", "no", "r")], False),
    "a reason at its length": ([("a", "yes", "r" * 300), ("b", "no", "r")], True),
}


@pytest.mark.parametrize("case", list(ANSWERS))
def test_the_schema_sent_and_the_validation_agree(judge: JudgeServer, case: str) -> None:
    judge.on("Claims", {"claims": ["a", "b"]})
    judge.on("HallucinationVerdicts", verdicts_on_claims("no"))
    judge.on("Reason", {"reason": "r"})
    result = create_hallucination_scorer(options={"context": CONTEXT}).run(output="It is a. It is b.")
    assert result.score == 0
    schema = sent_schema(judge, "HallucinationVerdicts")
    items, fits = ANSWERS[case]
    answer = {"verdicts": [{"statement": statement, "verdict": verdict, "reason": reason} for statement, verdict, reason in items]}
    by_schema = jsonschema.Draft202012Validator(schema).is_valid(answer)
    judge.reset()
    judge.on("Claims", {"claims": ["a", "b"]})
    judge.on("HallucinationVerdicts", answer)
    judge.on("Reason", {"reason": "r"})
    try:
        create_hallucination_scorer(options={"context": CONTEXT}).run(output="It is a. It is b.")
        by_validation = True
    except Exception:  # noqa: BLE001 - refused after its re-asks
        by_validation = False
    assert by_schema == by_validation == fits


def test_a_judge_that_ignores_the_schema_is_asked_again_with_what_was_wrong(judge: JudgeServer) -> None:
    judge.on("Claims", {"claims": ["a", "b"]})
    wrong = {"verdicts": [{"statement": "a", "verdict": "yes", "reason": "r"}, {"statement": "something else", "verdict": "no", "reason": "r"}]}
    judge.on("HallucinationVerdicts", [wrong, verdicts_on_claims("yes")])
    judge.on("Reason", {"reason": "r"})
    result = create_hallucination_scorer(options={"context": CONTEXT}).run(output="It is a. It is b.")
    assert result.score == 1
    reask = json.dumps(judge.requests_for("HallucinationVerdicts")[1].messages)
    assert 'verdicts[1].statement: \\"something else\\" is not one of the texts given; copy one exactly: \\"a\\", \\"b\\"' in reask
    assert "errors.pydantic.dev" not in reask


def catalog(tmp_path: Path, bounds: str, schema: str = "claims.yaml") -> Path:
    (tmp_path / "catalog.yaml").write_text(
        "scorers:\n  bounded:\n    extends: hallucination\n    steps:\n      - id: preprocess\n"
        f"        schema: {schema}\n        bounds:\n{bounds}",
        encoding="utf-8",
    )
    return tmp_path / "catalog.yaml"


@pytest.mark.parametrize(
    ("bounds", "expected"),
    [
        ('          claim: {max_items: 3}\n', r"catalog.yaml:8:18: bounded.preprocess.bounds: the answer has no list, string or number 'claim' \(it has: claims, claims\[\]\)"),
        ('          claims: {max_length: 3}\n', r"catalog.yaml:8:32: bounded.preprocess.bounds.claims.max_length: claims is a list; max_length bounds a string"),
        ('          claims: {max_items: "sentences(outptu) | length"}\n', r"catalog.yaml:8:42: bounded.preprocess.bounds.claims.max_items: unknown name 'outptu'; did you mean 'output'\?"),
        ('          claims: {max_items: -1}\n', r"catalog.yaml:8:31: bounded.preprocess.bounds.claims.max_items: must be a count of 0 or more"),
        ('          claims: {max_itmes: 2}\n', r"max_itmes"),
    ],
)
def test_bounds_are_checked_at_load_each_at_its_line(tmp_path: Path, bounds: str, expected: str) -> None:
    with pytest.raises(CatalogErrors, match=expected):
        load_scorers(catalog(tmp_path, bounds))


def test_a_bound_that_works_out_to_no_count_is_the_items_error(judge: JudgeServer, tmp_path: Path) -> None:
    judge.on("Claims", {"claims": ["a"]})
    scorer = load_scorers(catalog(tmp_path, '          claims: {max_items: "output"}\n')).create("bounded", options={"context": CONTEXT})
    with pytest.raises(ConfigError, match=r"bounded.preprocess.bounds.claims.max_items: gave 'It is a.', not a count of 0 or more"):
        scorer.run(output="It is a.")
    assert judge.requests == []


def test_an_inherited_bound_is_dropped_with_null(judge: JudgeServer, tmp_path: Path) -> None:
    judge.on("Claims", {"claims": ["a"]})
    judge.on("HallucinationVerdicts", verdicts_on_claims("no"))
    judge.on("Reason", {"reason": "r"})
    scorer = load_scorers(catalog(tmp_path, '          "claims[]": null\n')).create("bounded", options={"context": CONTEXT})
    scorer.run(output="It is a.")
    claims = sent_schema(judge, "Claims")["properties"]["claims"]
    assert claims["maxItems"] == 3 and claims["items"]["maxLength"] == 1000  # the schema's default again


def test_a_free_text_reason_is_bounded_by_its_length(judge: JudgeServer, tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "why.j2").write_text("Explain {{ score }}.", encoding="utf-8")
    (tmp_path / "catalog.yaml").write_text(
        "scorers:\n  plain:\n    extends: hallucination\n    steps:\n      - id: generate_reason\n        kind: reason\n"
        "        prompt: why.j2\n        schema: null\n        bounds: {reason: {max_length: 250}}\n",
        encoding="utf-8",
    )
    judge.on("Claims", {"claims": ["a"]})
    judge.on("HallucinationVerdicts", verdicts_on_claims("no"))
    judge.on(None, "Nothing is made up.")
    load_scorers(tmp_path / "catalog.yaml").create("plain", options={"context": CONTEXT}).run(output="It is a.")
    assert judge.requests_for(None)[0].body["max_tokens"] == 250 + 16  # 250 characters at one a token at most, and room


def test_show_prints_the_bounds_a_sample_item_gets() -> None:
    shown = runner.invoke(app, ["show", "hallucination"])
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.split("bounds for a sample item", 1)[1].splitlines()
    assert lines[1].startswith("  preprocess: claims: at most 4 items; claims[]: at most 146 characters; max_tokens ")
    assert lines[2].startswith("  analyze: verdicts: exactly 4 items; verdicts[].statement: one of 4 given texts; verdicts[].reason: at most 300 characters; max_tokens ")
    abstract = runner.invoke(app, ["show", "rubric"])
    assert "bounds for a sample item: not worked out (rubric: options: give `criteria`" in abstract.stdout
    given = runner.invoke(app, ["show", "rubric", "--option", "criteria=[{criterion: polite}, {criterion: short}]"])
    assert "  analyze: verdicts: exactly 2 items; verdicts[].criterion: one of 2 given texts" in given.stdout


def test_check_warns_where_a_free_string_or_list_has_no_bound_from_the_item(tmp_path: Path) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "v.j2").write_text('Is it short?\n{{ output | untrusted("output") }}\n', encoding="utf-8")
    (tmp_path / "schemas" / "v.yaml").write_text(
        "title: V\ntype: object\nproperties:\n  why: {type: string}\n  notes: {type: array, items: {type: string, maxLength: 80}}\n"
        "  good: {type: boolean}\nrequired: [why, notes, good]\n",
        encoding="utf-8",
    )
    (tmp_path / "catalog.yaml").write_text(
        "scorers:\n  short:\n    name: Short\n    description: 1 when short.\n    direction: higher_is_better\n    steps:\n"
        "      - id: verdict\n        kind: llm\n        prompt: v.j2\n        schema: v.yaml\n        bounds:\n"
        '          notes: {max_items: "sentences(output) | length"}\n      - id: score\n        kind: score\n'
        '        score: "1 if verdict.good else 0"\n',
        encoding="utf-8",
    )
    checked = runner.invoke(app, ["check", str(tmp_path / "catalog.yaml")])
    assert checked.exit_code == 0, checked.output
    warnings = [line for line in checked.stdout.splitlines() if ": warning: " in line]
    assert warnings == [
        f"{tmp_path / 'catalog.yaml'}:10:17: warning: short.verdict: why is a free string with no bound worked out from the item "
        "(only the default 1000 characters, which a looping judge fills); bound it in the step's `bounds:`, e.g. why: {max_length: 300} [unbounded-answer]"
    ]
    built_in = runner.invoke(app, ["check"])
    assert "warning" not in built_in.stdout + built_in.stderr
    # An author who means the default silences it at the step's `schema:` line, by its code.
    catalog = (tmp_path / "catalog.yaml").read_text(encoding="utf-8")
    (tmp_path / "catalog.yaml").write_text(catalog.replace("schema: v.yaml\n", "schema: v.yaml  # scorers: ignore[unbounded-answer]\n"), encoding="utf-8")
    silenced = runner.invoke(app, ["check", str(tmp_path / "catalog.yaml")])
    assert silenced.exit_code == 0, silenced.output
    assert ": warning: " not in silenced.stdout


def test_every_built_in_judge_step_is_bounded_from_its_inputs() -> None:
    from engine import builtin_catalog

    assert builtin_catalog().warnings == []


def test_hallucination_and_faithfulness_extract_claims_with_one_request_text(judge: JudgeServer) -> None:
    from engine import create_scorer

    judge.on("Claims", lambda request: {"claims": [between(request.prompt, "output")]})
    judge.on("HallucinationVerdicts", verdicts_on_claims("no"))
    judge.on("FaithfulnessVerdicts", verdicts_on_claims("yes"))
    judge.on("Reason", {"reason": "r"})
    for scorer_id in ("hallucination", "faithfulness"):
        create_scorer(scorer_id, options={"context": CONTEXT}).run(output=OUTPUT)
    first, second = judge.requests_for("Claims")
    assert first.body == second.body  # the same question: one of them can answer both (see the shared-requests tests)
    assert numbered_claims(judge.requests_for("HallucinationVerdicts")[0].prompt) == [OUTPUT]


def test_a_score_is_bounded_by_the_scorers_range(judge: JudgeServer) -> None:
    from engine import create_scorer

    # A small judge once answered 1000000000000000 for a score from 1 to 5.
    judge.on("CriteriaEvaluation", [{"evaluation": "Good.", "score": 1000000000000000}, {"evaluation": "Good.", "score": 4}])
    judge.on("Reason", {"reason": "r"})
    result = create_scorer("criteria", options={"criteria": "The answer is polite.", "max_score": 7}).run(output="Thank you kindly.")
    assert result.score == 0.5  # (4 - 1) / (7 - 1)
    schema = sent_schema(judge, "CriteriaEvaluation")["properties"]["score"]
    assert (schema["minimum"], schema["maximum"]) == (1, 7)
    assert "The score 1000000000000000 is outside the range" in json.dumps(judge.requests_for("CriteriaEvaluation")[1].messages)  # the rule says it first

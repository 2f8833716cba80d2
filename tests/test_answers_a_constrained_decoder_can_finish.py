"""Answers a grammar-constrained judge can finish (issue 24): every answer schema bounds its
strings and lists by default (the author's own bounds win), the bounds go to the judge in the
JSON schema and are enforced when an answer is validated, and a judge that loops inside its
answer is stopped by them. One cut off while repeating itself is said to be looping."""

from __future__ import annotations

from engine.judge import JudgeSettings
import re
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from engine import AnswerCutOffError, builtin_catalog, load_scorers
from engine.catalog.answers import DEFAULT_MAX_ITEMS, DEFAULT_MAX_LENGTH
from engine.cli import app
from engine.testing import JudgeServer, looping

ONE_CALL = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "Sunny"},
    {"role": "assistant", "content": "It is sunny in Paris."},
]
RUN: dict[str, Any] = {
    "output": "The sky is blue.", "input": "What colour is the sky?", "context": ["The sky is blue."], "ground_truth": "Blue.",
    "turns": [{"role": "user", "content": "Hi, can you help?"}, {"role": "assistant", "content": "Of course."}],
    "expected_trajectory": [{"tool_name": "weather", "args": {"city": "Paris"}}],
}
#: What scorers need beyond the run: options of abstract scorers, a transcript with a tool call.
OPTIONS: dict[str, dict[str, Any]] = {
    "criteria": {"criteria": "The output is polite."},
    "rubric": {"criteria": [{"criterion": "The output is polite."}]},
    "conversation": {"criterion": "The assistant helps."},
    "classifier": {"question": "Is it polite?", "labels": [{"label": "yes", "score": 1}, {"label": "no", "score": 0}]},
}
OUTPUTS: dict[str, Any] = {
    scorer_id: ONE_CALL
    for scorer_id in ("tool-call-accuracy", "trajectory-accuracy", "step-efficiency", "plan-adherence", "task-completion", "trajectory-match-judged")
}
#: Answers whose shape a rule fixes beyond the schema (the rest is built from the schema).
ANSWERS: dict[str, Any] = {
    "CriteriaEvaluation": {"score": 3},
    "ClassifierAnswer": {"label": "yes"},
}


def judged_scorers() -> list[str]:
    catalog = builtin_catalog()
    return [scorer_id for scorer_id in catalog.ids() if catalog.plan(scorer_id).needs_judge]


def test_every_answer_schema_is_bounded_in_what_the_judge_is_sent() -> None:
    catalog = builtin_catalog()
    for scorer_id in judged_scorers():
        for step in catalog.plan(scorer_id).steps:
            model = getattr(step, "answer_model", None)
            if model is None:
                continue
            schema = model.model_json_schema()
            for found in _nodes(schema):
                if found.get("type") == "string" and "enum" not in found:
                    assert "maxLength" in found, (scorer_id, step.id, found)
                if found.get("type") == "array":
                    assert "maxItems" in found, (scorer_id, step.id, found)


def _nodes(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        return [node, *(child for value in node.values() for child in _nodes(value))]
    if isinstance(node, list):
        return [child for value in node for child in _nodes(value)]
    return []


@pytest.fixture(scope="module")
def warm(judge_server: JudgeServer) -> None:
    """One run first: the first judge call of a process imports and builds the client (seconds
    on a busy machine), which is not the time a looping judge takes."""
    judge_server.reset()
    judge_server.fallback = looping()
    builtin_catalog().create("bias", model="openai/test-model", judge=JudgeSettings(base_url=judge_server.base_url, api_key="sk-test")).run(output="Fine.")


@pytest.mark.slow
@pytest.mark.parametrize("scorer_id", judged_scorers())
def test_a_judge_looping_inside_its_answer_still_ends_with_a_score_within_seconds(warm: None, judge: JudgeServer, scorer_id: str) -> None:
    judge.fallback = looping()
    for name, answer in ANSWERS.items():
        judge.on(name, looping(answer))
    plan = builtin_catalog().plan(scorer_id)
    run = {field: value for field, value in RUN.items() if field in plan.requires or field == "output"}
    if scorer_id in OUTPUTS:
        run["output"] = OUTPUTS[scorer_id]
    if builtin_catalog().definition(scorer_id).pairwise:
        run["metadata"] = {"second_output": "The sky is green."}
    scorer = builtin_catalog().create(scorer_id, options=OPTIONS.get(scorer_id))
    started = time.perf_counter()
    result = scorer.run(**run)
    assert result.score is not None
    assert time.perf_counter() - started < 10
    # the judge did loop, up to the bounds it was sent
    looped = [step for step in result.steps.values() if "and so on and so on" in str(step.result)]
    assert looped and all("maxLength" in str(request.answer_schema) for request in judge.requests if request.answer_schema)


def write(folder: Path, text: str, name: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


CATALOG = """\
scorers:
  summary-check:
    name: Summary check
    description: 1 when the judge finds the output a good summary.
    direction: higher_is_better
    steps:
      - id: verdict
        kind: llm
        prompt: verdict.j2
        schema: verdict.yaml
        judge: {max_tokens: 600}
      - id: score
        kind: score
        score: "(1 if verdict.good else 0) * options.scale"
"""
SCHEMA = """\
title: SummaryVerdict
type: object
properties:
  evaluation:
    type: string
    {bound}
    description: Why, in a sentence or two.
  notes:
    type: array
    items: {type: string}
  good:
    type: boolean
required: [evaluation, notes, good]
"""


def catalog_with(tmp_path: Path, bound: str) -> Path:
    write(tmp_path, "Is this a good summary? Answer yes or no.\n{{ output | untrusted('output') }}\n", "prompts/verdict.j2")
    write(tmp_path, SCHEMA.replace("{bound}", bound), "schemas/verdict.yaml")
    return write(tmp_path, CATALOG, "catalog.yaml")


def test_an_authors_own_bounds_win_and_are_enforced(tmp_path: Path) -> None:
    catalog = load_scorers(catalog_with(tmp_path, "maxLength: 50"))
    model = catalog.plan("summary-check").steps[0].answer_model  # type: ignore[union-attr]
    schema = model.model_json_schema()
    assert schema["properties"]["evaluation"]["maxLength"] == 50
    assert schema["properties"]["notes"]["maxItems"] == DEFAULT_MAX_ITEMS
    assert schema["properties"]["notes"]["items"]["maxLength"] == DEFAULT_MAX_LENGTH
    model.model_validate({"evaluation": "x" * 50, "notes": [], "good": True})
    with pytest.raises(ValidationError, match="at most 50 characters"):
        model.model_validate({"evaluation": "x" * 51, "notes": [], "good": True})
    with pytest.raises(ValidationError, match=f"at most {DEFAULT_MAX_ITEMS} items"):
        model.model_validate({"evaluation": "x", "notes": ["n"] * (DEFAULT_MAX_ITEMS + 1), "good": True})


def test_a_judge_bounded_by_the_schema_finishes(judge: JudgeServer, tmp_path: Path) -> None:
    judge.fallback = looping()
    scorer = load_scorers(catalog_with(tmp_path, "maxLength: 300")).create("summary-check")
    assert scorer.run(output="A summary.").score == 0  # the looping judge answers false
    [request] = judge.requests
    assert request.answer_schema is not None and request.answer_schema["properties"]["evaluation"]["maxLength"] == 300


def test_a_judge_cut_off_while_repeating_itself_is_said_to_be_looping(judge: JudgeServer, tmp_path: Path) -> None:
    judge.fallback = looping()
    scorer = load_scorers(catalog_with(tmp_path, "maxLength: 100000")).create("summary-check")  # as good as unbounded
    with pytest.raises(AnswerCutOffError) as caught:
        scorer.run(output="A summary.")
    message = str(caught.value)
    assert re.search(r"cut off at 600 tokens while repeating itself \('[a-z ]*so[a-z ]*' over and over\): the judge was looping", message), message
    assert "bound the answer's strings and lists in the schema (maxLength, maxItems)" in message


def test_an_answer_cut_off_without_repeating_itself_still_asks_for_more_tokens(judge: JudgeServer, tmp_path: Path) -> None:
    from engine.testing import Reply

    judge.fallback = Reply.cut_off('{"evaluation": "The summary covers the first half of the text but then it')
    scorer = load_scorers(catalog_with(tmp_path, "")).create("summary-check")
    with pytest.raises(AnswerCutOffError, match="cut off at 600 tokens; raise max_tokens for this step"):
        scorer.run(output="A summary.")


def test_show_lists_a_scorers_answer_bounds() -> None:
    result = CliRunner().invoke(app, ["show", "hallucination"])
    assert result.exit_code == 0, result.output
    assert f"analyze: verdicts ≤ {DEFAULT_MAX_ITEMS} items; verdicts[].statement ≤ {DEFAULT_MAX_LENGTH} characters; verdicts[].reason ≤ {DEFAULT_MAX_LENGTH} characters" in " ".join(result.stdout.split())

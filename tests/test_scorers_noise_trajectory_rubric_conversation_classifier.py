"""The judge scorers added for teams coming from Mastra (noise-sensitivity, trajectory-accuracy,
rubric, conversation, classifier): YAML, templates and schemas only, each run end to end
against the scripted OpenAI-compatible server, with its score worked out by hand."""

from __future__ import annotations

from engine.judge import JudgeSettings
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

import engine
from engine import ConfigError, JudgeError, RunInputError
from engine.cli import app
from engine.testing import JudgeServer

MODEL = "openai/test-model"


def tool_call_messages(*calls: tuple[str, str]) -> list[dict[str, Any]]:
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": f"c{index}", "type": "function", "function": {"name": name, "arguments": arguments}}
                for index, (name, arguments) in enumerate(calls)
            ],
        },
        {"role": "assistant", "content": "Booked."},
    ]


# --- noise-sensitivity -----------------------------------------------------------------------


DIMENSIONS = ("content_accuracy", "completeness", "relevance", "consistency", "hallucination")


def impacts(**levels: str) -> dict[str, Any]:
    return {"dimensions": {name: {"impact": level, "explanation": "e"} for name, level in levels.items()}}


def test_noise_sensitivity_averages_the_dimensions_and_penalises_a_misled_response(judge: JudgeServer) -> None:
    answer = impacts(content_accuracy="moderate", completeness="none", relevance="minimal", consistency="significant", hallucination="severe")
    judge.on("NoiseImpact", {**answer, "misled": True})
    judge.on("Reason", {"reason": "Misled by the planted claim."})
    scorer = engine.create_scorer("noise-sensitivity", MODEL, options={"noise": "The moon is made of cheese.", "noise_type": "misinformation"})

    result = scorer.run("The moon is cheese.", input="What is the moon made of?", ground_truth="Rock and dust.")

    # mean(0.5, 1, 0.8, 0.2, 0) = 0.5; misled: 0.5 - 0.3 = 0.2
    assert result.score == 0.2
    assert result.steps["score"].result["robustness"] == pytest.approx(0.5)
    prompt = judge.requests_for("NoiseImpact")[0].prompt
    assert "<baseline_response>\nRock and dust.\n</baseline_response>" in prompt
    assert "<noise>\nThe moon is made of cheese.\n</noise>" in prompt and "misinformation" in prompt
    reason_prompt = judge.requests_for("Reason")[0].prompt
    assert "reduced by 0.3 because the response was misled" in reason_prompt
    assert '- content_accuracy: moderate: "e"\n- completeness: none: "e"' in reason_prompt  # each dimension shown to the reason step
    assert result.reason == "Misled by the planted claim."


def test_noise_sensitivity_unaffected_response_is_fully_robust_and_never_below_zero(judge: JudgeServer) -> None:
    judge.on("NoiseImpact", [
        {**impacts(content_accuracy="none", completeness="none", relevance="none", consistency="none", hallucination="none"), "misled": False},
        {**impacts(content_accuracy="severe", completeness="severe", relevance="significant", consistency="severe", hallucination="severe"), "misled": True},
    ])
    judge.on("Reason", {"reason": "r"})
    scorer = engine.create_scorer("noise-sensitivity", MODEL, options={"scale": 10})

    assert scorer.run("Rock.", input="q", ground_truth="Rock.").score == 10
    assert scorer.run("Cheese.", input="q", ground_truth="Rock.").score == 0  # 0.04 - 0.3 is clamped at 0


def test_noise_sensitivity_needs_the_baseline_and_all_five_dimensions(judge: JudgeServer) -> None:
    scorer = engine.create_scorer("noise-sensitivity", MODEL)
    with pytest.raises(RunInputError, match="ground_truth"):
        scorer.run("x", input="q")
    assert judge.requests == []

    # a judge that does not decode under the schema and leaves dimensions out is asked again
    judge.on("NoiseImpact", [
        {**impacts(content_accuracy="none", completeness="none"), "misled": False},
        {**impacts(content_accuracy="none", completeness="none", relevance="none", consistency="none", hallucination="minimal"), "misled": False},
    ])
    judge.on("Reason", {"reason": "r"})
    assert scorer.run("x", input="q", ground_truth="x").score == 0.96  # (4 + 0.8) / 5, after one re-ask
    reask = str(judge.requests_for("NoiseImpact")[1].messages[-1]["content"])
    assert "dimensions.relevance" in reask and "dimensions.hallucination" in reask


def test_noise_sensitivity_asks_for_an_answer_a_constrained_decoder_cannot_get_wrong(judge: JudgeServer) -> None:
    """A server decoding under the JSON schema sent (llama.cpp, vLLM, Ollama, structured
    outputs) can write only what the schema admits: it must admit each dimension exactly
    once, by its name, so no answer it allows fails validation for a missing or repeated one."""
    judge.on("NoiseImpact", {**impacts(**dict.fromkeys(DIMENSIONS, "none")), "misled": False})
    judge.on("Reason", {"reason": "r"})
    engine.create_scorer("noise-sensitivity", MODEL).run("Rock.", input="q", ground_truth="Rock.")

    sent = judge.requests_for("NoiseImpact")[0].answer_schema
    assert sent is not None

    def resolved(node: dict[str, Any]) -> dict[str, Any]:
        return sent["$defs"][node["$ref"].rsplit("/", 1)[-1]] if "$ref" in node else node

    dimensions = resolved(sent["properties"]["dimensions"])
    assert dimensions["type"] == "object" and dimensions["additionalProperties"] is False
    assert sorted(dimensions["properties"]) == sorted(dimensions["required"]) == sorted(DIMENSIONS)
    for name in DIMENSIONS:
        assessed = resolved(dimensions["properties"][name])
        assert assessed["required"] == ["impact", "explanation"] and assessed["properties"]["explanation"]["maxLength"] == 300
    validator = jsonschema.Draft202012Validator(sent)
    complete = {**impacts(**dict.fromkeys(DIMENSIONS, "moderate")), "misled": True}
    assert validator.is_valid(complete)
    one_missing = {"dimensions": {name: value for name, value in complete["dimensions"].items() if name != "relevance"}, "misled": True}
    one_more = {"dimensions": {**complete["dimensions"], "tone": {"impact": "none", "explanation": "e"}}, "misled": True}
    as_a_list = {"dimensions": [{"dimension": name, **value} for name, value in complete["dimensions"].items()], "misled": True}
    rambling = {"dimensions": {**complete["dimensions"], "relevance": {"impact": "none", "explanation": "e" * 301}}, "misled": True}
    assert not any(validator.is_valid(answer) for answer in (one_missing, one_more, as_a_list, rambling))


def test_show_lists_the_bound_of_each_noise_dimensions_explanation() -> None:
    result = CliRunner().invoke(app, ["show", "noise-sensitivity"])
    assert result.exit_code == 0, result.output
    shown = " ".join(result.stdout.split())
    assert all(f"dimensions.{name}.explanation ≤ 300 characters" in shown for name in DIMENSIONS), shown


# --- trajectory-accuracy (judged) --------------------------------------------------------------


def review(*steps: tuple[bool, bool], missing: list[str] | None = None, tools: tuple[str, ...] = ("search", "search", "book", "confirm")) -> dict[str, Any]:
    """One review per call, each naming its call's tool (`tools`, in order)."""
    return {
        "steps": [{"tool_name": tool, "necessary": necessary, "well_ordered": ordered, "reason": "r"} for tool, (necessary, ordered) in zip(tools, steps)],
        "missing": missing or [],
    }


def test_trajectory_accuracy_weighs_necessity_order_and_missing_steps(judge: JudgeServer) -> None:
    judge.on("TrajectoryReview", review((True, True), (False, True), (True, False), (True, True), missing=["pay", "send invoice"]))
    judge.on("Reason", {"reason": "One redundant search, payment missing."})
    calls = tool_call_messages(("search", '{"q": "Paris"}'), ("search", '{"q": "Paris"}'), ("book", "{}"), ("confirm", "{}"))
    scorer = engine.create_scorer("trajectory-accuracy", MODEL)

    result = scorer.run(calls, input="Book a hotel in Paris and pay for it.", expected_trajectory=["search", {"tool_name": "book", "args": {"city": "Paris"}}, "pay"])

    # 0.6 * 3/4 + 0.3 * 3/4 + 0.1 * (1 - 2/6) = 0.45 + 0.225 + 0.0667 = 0.7417
    assert result.score == 0.74
    prompt = judge.requests_for("TrajectoryReview")[0].prompt
    assert '1. search {"q": "Paris"}' in prompt
    assert '2. book {"city": "Paris"}' in prompt and "3. pay" in prompt
    assert "<expected_trajectory>" in prompt


def test_trajectory_accuracy_without_calls_scores_by_what_was_missing(judge: JudgeServer) -> None:
    judge.on("TrajectoryReview", [review(), review(missing=["search"])])
    judge.on("Reason", {"reason": "r"})
    scorer = engine.create_scorer("trajectory-accuracy", MODEL, options={"necessity_weight": 0.5, "order_weight": 0.5, "completeness_weight": 0})

    assert scorer.run("Hello!", input="Say hello.").score == 1
    assert scorer.run("I think it is sunny.", input="What is the weather in Oslo now?").score == 0
    assert "The agent took no steps" in judge.requests_for("TrajectoryReview")[0].prompt


def test_trajectory_accuracy_weights_must_add_up_to_one() -> None:
    with pytest.raises(ConfigError, match="add up to 1"):
        engine.create_scorer("trajectory-accuracy", MODEL, options={"order_weight": 0.5}, judge=JudgeSettings(api_key="k"))


# --- rubric --------------------------------------------------------------------------------------

CRITERIA = [
    {"criterion": "Greets the user", "required": False, "weight": 1},
    {"criterion": "Gives the opening hours", "required": True, "weight": 2},
    {"criterion": "Mentions the address", "required": True, "weight": 1},
]


def rubric_verdicts(*passed: bool) -> dict[str, Any]:
    return {"verdicts": [{"criterion": item["criterion"], "passed": flag, "reason": "r"} for item, flag in zip(CRITERIA, passed)]}


def test_rubric_is_one_only_when_every_required_criterion_passes(judge: JudgeServer) -> None:
    judge.on("RubricVerdicts", [rubric_verdicts(False, True, True), rubric_verdicts(True, True, False)])
    judge.on("Reason", {"reason": "r"})
    scorer = engine.create_scorer("rubric", MODEL, options={"criteria": CRITERIA})

    assert scorer.run("We open 9-5 at 1 Main St.").score == 1  # the failed criterion is optional
    assert scorer.run("Hi! We open 9-5.").score == 0
    prompt = judge.requests_for("RubricVerdicts")[0].prompt
    assert '2. "Gives the opening hours" (required)' in prompt and '1. "Greets the user" (optional)' in prompt
    reason_prompt = judge.requests_for("Reason")[1].prompt
    assert '[FAILED, required] "Mentions the address"' in reason_prompt


def test_rubric_weighted_share_and_one_verdict_per_criterion(judge: JudgeServer) -> None:
    judge.on("RubricVerdicts", [{"verdicts": rubric_verdicts(True, False, True)["verdicts"][:2]}, rubric_verdicts(True, False, True)])
    judge.on("Reason", {"reason": "r"})
    scorer = engine.create_scorer("rubric", MODEL, options={"criteria": CRITERIA, "scoring": "weighted", "scale": 10})

    assert scorer.run("Hi! We are at 1 Main St.").score == 5  # (1 + 1) / 4 * 10, after one re-ask
    assert "There are 3 criteria but 2 verdicts" in str(judge.requests_for("RubricVerdicts")[1].messages[-1]["content"])


def test_rubric_without_criteria_is_refused() -> None:
    with pytest.raises(ConfigError, match="give `criteria`"):
        engine.create_scorer("rubric", MODEL, judge=JudgeSettings(api_key="k"))


# --- conversation ----------------------------------------------------------------------------------

TURNS = [
    {"role": "user", "content": "Hi, I need to change my flight."},
    {"role": "assistant", "content": "Of course. What is your booking code?"},
    {"role": "user", "content": "AB123"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "find_booking", "arguments": '{"code": "AB123"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": '{"flight": "LH 400"}'},
    {"role": "assistant", "content": "Figure it out yourself."},
]


def test_conversation_fails_at_the_turn_that_breaks_the_criterion(judge: JudgeServer) -> None:
    judge.on("ConversationVerdict", {"analysis": "Turn 6 is rude.", "breaking_turn": 6})
    judge.on("Reason", {"reason": "Rude at turn 6."})
    scorer = engine.create_scorer("conversation", MODEL, options={"criterion": "The assistant stays polite."})

    result = scorer.run(turns=TURNS)

    assert result.score == 0
    assert result.steps["score"].result["breaking_turn"] == 6
    prompt = judge.requests_for("ConversationVerdict")[0].prompt
    assert '[turn 1] user: "Hi, I need to change my flight."' in prompt
    assert 'calls find_booking {"code": "AB123"}' in prompt
    assert '[turn 6] assistant: "Figure it out yourself."' in prompt
    assert "first broken at turn 6" in judge.requests_for("Reason")[0].prompt


def test_conversation_pass_and_a_breaking_turn_outside_the_conversation_is_reasked(judge: JudgeServer) -> None:
    judge.on("ConversationVerdict", [{"analysis": "a", "breaking_turn": 9}, {"analysis": "a", "breaking_turn": 0}])
    judge.on("Reason", {"reason": "r"})
    scorer = engine.create_scorer("conversation", MODEL, options={"criterion": "Polite.", "scale": 5})

    assert scorer.run(turns=TURNS[:2]).score == 5
    assert "breaking_turn" in str(judge.requests_for("ConversationVerdict")[1].messages[-1]["content"])
    # The verdict is one number a decoder holds to the conversation: no "pass" beside a broken turn.
    sent = judge.requests_for("ConversationVerdict")[0].body["response_format"]["json_schema"]["schema"]["properties"]
    assert set(sent) == {"analysis", "breaking_turn"} and (sent["breaking_turn"]["minimum"], sent["breaking_turn"]["maximum"]) == (0, 2)


def test_conversation_needs_turns(judge: JudgeServer) -> None:
    scorer = engine.create_scorer("conversation", MODEL, options={"criterion": "Polite."})
    with pytest.raises(RunInputError, match="turns"):
        scorer.run("just an output")
    assert judge.requests == []


# --- classifier -----------------------------------------------------------------------------------

LABELS = [
    {"label": "yes", "score": 1, "description": "the reply is in the user's language"},
    {"label": "partly", "score": 0.5},
    {"label": "no", "score": 0},
]


def test_classifier_scores_the_chosen_label_case_insensitively(judge: JudgeServer) -> None:
    judge.on("ClassifierAnswer", [{"justification": "j", "label": " Partly"}, {"justification": "j", "label": "no"}])
    judge.on("Reason", {"reason": "r"})
    scorer = engine.create_scorer("classifier", MODEL, options={"question": "Is the reply in the user's language?", "labels": LABELS})

    assert scorer.run("Bonjour, hello", input="Bonjour").score == 0.5
    assert scorer.run("Hello", input="Bonjour").score == 0
    prompt = judge.requests_for("ClassifierAnswer")[0].prompt
    assert 'Question: "Is the reply in the user\'s language?"' in prompt
    assert "- \"yes\": the reply is in the user's language" in prompt


def test_classifier_reasks_a_label_that_is_not_allowed_then_fails(judge: JudgeServer) -> None:
    judge.on("ClassifierAnswer", {"justification": "j", "label": "maybe"})
    scorer = engine.create_scorer("classifier", MODEL, options={"question": "Polite?", "labels": LABELS[::2]})

    with pytest.raises(JudgeError):
        scorer.run("Hi")
    assert '"maybe" is not one of the allowed labels' in str(judge.requests_for("ClassifierAnswer")[1].messages[-1]["content"])
    assert judge.requests_for("Reason") == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"labels": LABELS}, "give `question`"),
        ({"question": "q", "labels": LABELS[:1]}, "at least two"),
        ({"question": "q", "labels": [{"label": "Yes", "score": 1}, {"label": "yes ", "score": 0}]}, "must differ"),
    ],
)
def test_classifier_options_are_checked_when_created(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        engine.create_scorer("classifier", MODEL, options=options, judge=JudgeSettings(api_key="k"))

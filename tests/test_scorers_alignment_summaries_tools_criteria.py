"""The alignment, summary, similarity, tool-call and criteria scorers (prompt-alignment, summarization, answer-similarity,
tool-call-accuracy, criteria), each defined only in scorers.yaml + prompts/ + schemas/, run
against the scripted OpenAI-compatible server as a user would run them."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from helpers.summaries import SOURCE, script_summary

import engine
from engine import ConfigError, RunInputError
from engine.errors import NotScorable
from engine.testing import JudgeServer, Request

MODEL = "openai/test-model"


def last_message(request: Request) -> str:
    """The text of the last message of a request: on a re-ask, what the judge is told to fix."""
    return str(request.messages[-1].get("content") or "")


def reasons(judge: JudgeServer, text: str = "Explained.") -> None:
    judge.on("Reason", {"reason": text})


# --- prompt-alignment ----------------------------------------------------------------------

REQUIREMENTS = {
    "requirements": [
        {"requirement": "Explain what a mutex is", "kind": "intent"},
        {"requirement": "Give a code example", "kind": "content"},
        {"requirement": "Answer in at most three sentences", "kind": "format"},
    ]
}


def alignment_verdicts(*verdicts: str) -> dict[str, Any]:
    items = REQUIREMENTS["requirements"]
    return {"verdicts": [{"requirement": item["requirement"], "verdict": verdict, "reason": "r"} for item, verdict in zip(items, verdicts)]}


def test_prompt_alignment_weighs_partly_met_requirements_and_scales(judge: JudgeServer) -> None:
    judge.on("PromptRequirements", REQUIREMENTS)
    # Verdicts as a model might write them: case and spaces do not matter.
    judge.on("PromptAlignmentVerdicts", alignment_verdicts("Met", " partly ", "NOT MET"))
    reasons(judge)
    scorer = engine.create_scorer("prompt-alignment", MODEL, options={"scale": 10, "partial_weight": 0.25})

    result = scorer.run("A mutex lets one thread at a time enter a section.", input="Explain mutexes with an example, in three sentences.")

    assert result.score == 4.17  # (1 + 0.25 + 0) / 3 * 10, rounded to two decimals
    assert "Explain mutexes with an example" in judge.requests_for("PromptRequirements")[0].prompt
    analyze_prompt = judge.requests_for("PromptAlignmentVerdicts")[0].prompt
    assert '[format] "Answer in at most three sentences"' in analyze_prompt
    assert "A mutex lets one thread" in analyze_prompt
    reason_prompt = judge.requests_for("Reason")[0].prompt
    assert "The score is 4.17 on a scale from 0 to 10" in reason_prompt
    assert "partly met counts 0.25" in reason_prompt
    assert result.reason == "Explained."


def test_prompt_alignment_default_weight_and_direction(judge: JudgeServer) -> None:
    judge.on("PromptRequirements", REQUIREMENTS)
    judge.on("PromptAlignmentVerdicts", alignment_verdicts("met", "partly", "met"))
    reasons(judge)

    result = engine.create_scorer("prompt-alignment", MODEL).run("...", input="Explain mutexes.")

    assert result.score == 0.83  # 2.5 / 3
    assert engine.builtin_catalog().definition("prompt-alignment").direction == "higher_is_better"


def test_prompt_alignment_empty_output_is_not_scorable_without_a_request(judge: JudgeServer) -> None:
    # Issue 20: an empty answer is not scored (it used to score 0).
    with pytest.raises(NotScorable, match="prompt-alignment: the output is whitespace only"):
        engine.create_scorer("prompt-alignment", MODEL).run("   ", input="Explain mutexes.")
    assert judge.requests == []


def test_prompt_alignment_reasks_when_a_verdict_is_missing(judge: JudgeServer) -> None:
    judge.on("PromptRequirements", REQUIREMENTS)
    judge.on("PromptAlignmentVerdicts", [alignment_verdicts("met", "met"), alignment_verdicts("met", "met", "not met")])
    reasons(judge)

    result = engine.create_scorer("prompt-alignment", MODEL).run("...", input="Explain mutexes.")

    asked = judge.requests_for("PromptAlignmentVerdicts")
    assert len(asked) == 2 and asked[1].is_reask
    assert "There are 3 requirements but 2 verdicts" in last_message(asked[1])
    assert result.score == 0.67


def test_prompt_alignment_needs_an_input(judge: JudgeServer) -> None:
    with pytest.raises(RunInputError, match="input"):
        engine.create_scorer("prompt-alignment", MODEL).run("Some output")
    assert judge.requests == []


def test_reason_language_option_reaches_the_reason_prompt(judge: JudgeServer) -> None:
    judge.on("PromptRequirements", REQUIREMENTS)
    judge.on("PromptAlignmentVerdicts", alignment_verdicts("met", "met", "met"))
    reasons(judge)

    engine.create_scorer("prompt-alignment", MODEL, options={"language": "ko"}).run("...", input="Explain mutexes.")

    assert "Write the explanation in this language: ko" in judge.requests_for("Reason")[0].prompt


# --- summarization -------------------------------------------------------------------------


def test_summarization_score_is_the_lower_of_alignment_and_coverage(judge: JudgeServer) -> None:
    # Alignment 2/3 (one claim not in the source), coverage 1/4: coverage sets the score.
    script_summary(judge, ["yes", "yes", "unsure"], ["yes", "no", "no", "no"])

    result = engine.create_scorer("summarization", MODEL).run("The council approved a bridge.", input=SOURCE)

    assert result.score == 0.25
    assert result.steps["score"].result == {"alignment": pytest.approx(2 / 3), "coverage": 0.25, "score": 0.25}
    # The source is the input; the claims are judged against it and the questions come from it.
    assert SOURCE in judge.requests_for("SummaryClaimVerdicts")[0].prompt
    assert SOURCE in judge.requests_for("SummaryKeyQuestions")[0].prompt
    assert "The council approved a bridge." in judge.requests_for("SummaryCoverageVerdicts")[0].prompt
    reason_prompt = judge.requests_for("Reason")[0].prompt
    assert "Alignment: 0.67" in reason_prompt and "Coverage: 0.25" in reason_prompt


def test_summarization_alignment_sets_the_score_when_lower_and_scale_applies(judge: JudgeServer) -> None:
    # Alignment 1/3 (a contradicted claim counts against it too), coverage 1.
    script_summary(judge, ["yes", "no", "unsure"], ["yes", "yes"])

    result = engine.create_scorer("summarization", MODEL, options={"scale": 5}).run("A summary.", input=SOURCE)

    assert result.score == 1.67  # 1/3 * 5


def test_summarization_empty_summary_is_not_scorable_without_a_request(judge: JudgeServer) -> None:
    # Issue 20: an empty summary is not scored (it used to score 0).
    with pytest.raises(NotScorable, match="summarization: the output is empty"):
        engine.create_scorer("summarization", MODEL).run("", input=SOURCE)
    assert judge.requests == []


def test_summarization_reasks_when_a_question_has_no_verdict(judge: JudgeServer) -> None:
    script_summary(judge, ["yes"], ["yes", "yes"])
    two = {"verdicts": [{"question": f"question {i}?", "verdict": "yes", "reason": "r"} for i in range(2)]}
    judge.on("SummaryCoverageVerdicts", [{"verdicts": two["verdicts"][:1]}, two])

    result = engine.create_scorer("summarization", MODEL).run("A summary.", input=SOURCE)

    asked = judge.requests_for("SummaryCoverageVerdicts")
    assert len(asked) == 2 and asked[1].is_reask
    assert "There are 2 questions but 1 verdicts" in last_message(asked[1])
    assert result.score == 1


def test_summarization_reasks_when_too_many_questions(judge: JudgeServer) -> None:
    script_summary(judge, ["yes"], ["yes"])
    many = {"questions": [{"question": f"question {i}?", "answer": "a"} for i in range(3)]}
    judge.on("SummaryKeyQuestions", [many, {"questions": many["questions"][:1]}])

    engine.create_scorer("summarization", MODEL, options={"question_count": 2}).run("A summary.", input=SOURCE)

    asked = judge.requests_for("SummaryKeyQuestions")
    assert "Write up to 2 key questions" in asked[0].prompt
    assert len(asked) == 2 and "between 1 and 2 key questions" in last_message(asked[1])


# --- answer-similarity ---------------------------------------------------------------------

KEY_POINTS = {"key_points": ["Water boils at 100 °C", "at sea level", "the boiling point drops with altitude", "about 70 °C on Everest"]}
#: A ground truth of four sentences: as many key points as the bounds allow it.
GROUND_TRUTH = "Water boils at 100 °C. That is at sea level. The boiling point drops with altitude. It is about 70 °C on Everest."


def grades(*graded: tuple[str, bool]) -> dict[str, Any]:
    return {
        "grades": [
            {"key_point": point, "grade": grade, "contradicted": contradicted, "reason": "r"}
            for point, (grade, contradicted) in zip(KEY_POINTS["key_points"], graded)
        ]
    }


def test_answer_similarity_grades_key_points_and_contradictions_earn_nothing(judge: JudgeServer) -> None:
    judge.on("ReferenceKeyPoints", KEY_POINTS)
    judge.on("KeyPointGrades", grades(("matched", False), ("partial", False), ("missing", False), ("partial", True)))
    reasons(judge)

    result = engine.create_scorer("answer-similarity", MODEL).run("Water boils at 100 degrees.", ground_truth=GROUND_TRUTH)

    assert result.score == 0.38  # (1 + 0.5 + 0 + 0) / 4 = 0.375
    assert result.steps["score"].result["contradictions"] == 1
    assert GROUND_TRUTH in judge.requests_for("ReferenceKeyPoints")[0].prompt
    assert "[partial, contradicted]" in judge.requests_for("Reason")[0].prompt


def test_answer_similarity_scale_and_partial_weight(judge: JudgeServer) -> None:
    judge.on("ReferenceKeyPoints", KEY_POINTS)
    judge.on("KeyPointGrades", grades(("matched", False), ("partial", False), ("partial", False), ("matched", False)))
    reasons(judge)

    scorer = engine.create_scorer("answer-similarity", MODEL, options={"scale": 100, "partial_weight": 0})
    result = scorer.run("...", ground_truth=GROUND_TRUTH)

    assert result.score == 50


def test_answer_similarity_reasks_a_contradicted_point_graded_matched(judge: JudgeServer) -> None:
    judge.on("ReferenceKeyPoints", KEY_POINTS)
    inconsistent = grades(("matched", True), ("matched", False), ("matched", False), ("matched", False))
    judge.on("KeyPointGrades", [inconsistent, grades(("missing", True), ("matched", False), ("matched", False), ("matched", False))])
    reasons(judge)

    result = engine.create_scorer("answer-similarity", MODEL).run("...", ground_truth=GROUND_TRUTH)

    asked = judge.requests_for("KeyPointGrades")
    assert len(asked) == 2 and "cannot be \"matched\"" in last_message(asked[1])
    assert result.score == 0.75


def test_answer_similarity_reasks_on_fewer_grades(judge: JudgeServer) -> None:
    judge.on("ReferenceKeyPoints", KEY_POINTS)
    full = grades(*[("matched", False)] * 4)
    judge.on("KeyPointGrades", [{"grades": full["grades"][:3]}, full])
    reasons(judge)

    result = engine.create_scorer("answer-similarity", MODEL).run("...", ground_truth=GROUND_TRUTH)

    assert "There are 4 key points but 3 grades" in last_message(judge.requests_for("KeyPointGrades")[1])
    assert result.score == 1


def test_answer_similarity_empty_output_and_missing_ground_truth(judge: JudgeServer) -> None:
    scorer = engine.create_scorer("answer-similarity", MODEL)

    with pytest.raises(NotScorable, match="answer-similarity: the output is empty"):  # issue 20: it used to score 0
        scorer.run("", ground_truth="Water boils at 100 °C.")
    assert judge.requests == []

    with pytest.raises(RunInputError, match="ground_truth"):
        scorer.run("Water boils at 100 °C.")


# --- tool-call-accuracy --------------------------------------------------------------------

QUESTION = "What's the weather in Paris, and what time is it in Tokyo?"
TRANSCRIPT: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a travel assistant."},
    {"role": "user", "content": QUESTION},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
            {"id": "call_b", "type": "function", "function": {"name": "get_stock_price", "arguments": '{"symbol": "AIR.PA"}'}},
        ],
    },
    {"role": "tool", "tool_call_id": "call_a", "content": '{"temperature": 12, "sky": "cloudy"}'},
    {"role": "tool", "tool_call_id": "call_b", "content": '{"price": 141.2}'},
    {"role": "assistant", "content": "It is 12 °C and cloudy in Paris."},
]
TOOLS = [
    {"name": "get_weather", "description": "Current weather for a city"},
    {"name": "get_time", "description": "Local time in a city"},
    {"name": "get_stock_price", "description": "Latest price of a share"},
]


def tool_verdicts(verdicts: list[tuple[str, str]], missed: list[str]) -> dict[str, Any]:
    return {
        "verdicts": [{"tool_name": name, "verdict": verdict, "reason": "r"} for name, verdict in verdicts],
        "missed": [{"tool_name": name, "reason": "r"} for name in missed],
    }


def test_tool_call_accuracy_on_an_openai_transcript(judge: JudgeServer) -> None:
    judge.on("ToolCallVerdicts", tool_verdicts([("get_weather", "yes"), ("get_stock_price", "no")], ["get_time"]))
    reasons(judge)
    scorer = engine.create_scorer("tool-call-accuracy", MODEL, options={"available_tools": TOOLS})

    result = scorer.run(TRANSCRIPT, input=QUESTION)

    assert result.score == 0.33  # 1 appropriate / (2 calls + 1 missed need)
    assert result.steps["score"].result == {"appropriate": 1, "calls": 2, "missed": 1, "score": 0.33}
    prompt = judge.requests_for("ToolCallVerdicts")[0].prompt
    assert '1. get_weather {"city": "Paris"}' in prompt
    assert '2. get_stock_price {"symbol": "AIR.PA"}' in prompt
    assert '"get_time": "Local time in a city"' in prompt
    assert "Return exactly 2 verdicts" in prompt
    assert "(1 / (2 + 1))" in judge.requests_for("Reason")[0].prompt


def test_tool_call_accuracy_without_calls_asks_whether_a_tool_was_needed(judge: JudgeServer) -> None:
    reply = [{"role": "user", "content": "What is 2 + 2?"}, {"role": "assistant", "content": "4."}]
    judge.on("ToolCallVerdicts", [tool_verdicts([], []), tool_verdicts([], ["calculator"])])
    reasons(judge)
    scorer = engine.create_scorer("tool-call-accuracy", MODEL, options={"scale": 2})

    # The transcript can serve as the input too: its user messages are the input's text.
    not_needed = scorer.run(reply, input=reply)
    needed = scorer.run(reply, input=reply)

    assert not_needed.score == 2  # no call was made and none was needed: full scale
    assert needed.score == 0
    prompt = judge.requests_for("ToolCallVerdicts")[0].prompt
    assert "<input>\nWhat is 2 + 2?\n</input>" in prompt
    assert "The agent made no tool calls." in prompt
    assert "Describe, in \"tool_name\", the kind of tool" in prompt  # no available_tools given


def test_tool_call_accuracy_empty_output_is_not_scorable_without_a_request(judge: JudgeServer) -> None:
    # Issue 20: an answer with neither text nor tool calls is not scored (it used to score 0).
    scorer = engine.create_scorer("tool-call-accuracy", MODEL)

    with pytest.raises(NotScorable, match="tool-call-accuracy: the output is a transcript whose assistant messages say nothing"):
        scorer.run([{"role": "user", "content": QUESTION}, {"role": "assistant", "content": ""}], input=QUESTION)
    assert judge.requests == []


def test_tool_call_accuracy_reasks_on_fewer_verdicts_and_unknown_missed_tools(judge: JudgeServer) -> None:
    judge.on(
        "ToolCallVerdicts",
        [
            tool_verdicts([("get_weather", "yes")], []),
            tool_verdicts([("get_weather", "yes"), ("get_stock_price", "no")], ["world_clock"]),
            tool_verdicts([("get_weather", "yes"), ("get_stock_price", "no")], ["get_time"]),
        ],
    )
    reasons(judge)

    result = engine.create_scorer("tool-call-accuracy", MODEL, options={"available_tools": TOOLS}).run(TRANSCRIPT, input=QUESTION)

    asked = judge.requests_for("ToolCallVerdicts")
    assert len(asked) == 3
    assert "made 2 tool calls but there are 1 verdicts" in last_message(asked[1])
    assert "must be one of the available tools (get_weather, get_time, get_stock_price)" in last_message(asked[2])
    assert result.score == 0.33


# --- criteria (G-Eval style) ---------------------------------------------------------------


def test_criteria_normalises_the_judges_score_to_the_scale(judge: JudgeServer) -> None:
    judge.on("CriteriaEvaluation", {"evaluation": "Polite and mostly complete.", "score": 4})
    reasons(judge)
    scorer = engine.create_scorer("criteria", MODEL, options={"criteria": "The reply is polite and answers the question."})

    result = scorer.run("Happy to help: it opens at 9.", input="When do you open?")

    assert result.score == 0.75  # (4 - 1) / (5 - 1)
    assert result.steps["score"].result["raw_score"] == 4
    prompt = judge.requests_for("CriteriaEvaluation")[0].prompt
    assert "The reply is polite and answers the question." in prompt
    assert "an integer from 1 (the output fails the criteria completely) to 5" in prompt
    assert "When do you open?" in prompt


def test_criteria_custom_range_and_evaluation_steps(judge: JudgeServer) -> None:
    judge.on("CriteriaEvaluation", {"evaluation": "...", "score": 7})
    reasons(judge)
    options = {"evaluation_steps": ["Check the tone.", "Check every question is answered."], "min_score": 0, "max_score": 10, "scale": 100}

    result = engine.create_scorer("criteria", MODEL, options=options).run("An answer.")

    assert result.score == 70
    prompt = judge.requests_for("CriteriaEvaluation")[0].prompt
    assert "1. Check the tone.\n2. Check every question is answered." in prompt
    assert "from 0 (the output fails" in prompt
    assert "<input>" not in prompt  # no input given: no empty block


def test_criteria_reasks_a_score_out_of_range(judge: JudgeServer) -> None:
    judge.on("CriteriaEvaluation", [{"evaluation": "Excellent.", "score": 9}, {"evaluation": "Excellent.", "score": 5}])
    reasons(judge)

    result = engine.create_scorer("criteria", MODEL, options={"criteria": "Concise."}).run("Yes.")

    asked = judge.requests_for("CriteriaEvaluation")
    assert len(asked) == 2 and asked[1].is_reask
    assert "The score 9 is outside the range: give an integer from 1 to 5" in last_message(asked[1])
    assert result.score == 1


def test_criteria_empty_output_is_not_scorable_without_a_request(judge: JudgeServer) -> None:
    # Issue 20: an empty answer is not scored (it used to score 0).
    with pytest.raises(NotScorable, match="criteria: the output is empty"):
        engine.create_scorer("criteria", MODEL, options={"criteria": "Concise."}).run("")
    assert judge.requests == []


def test_criteria_without_criteria_or_steps_is_refused_at_creation(judge: JudgeServer) -> None:
    with pytest.raises(ConfigError, match="give `criteria`.*or `evaluation_steps`"):
        engine.create_scorer("criteria", MODEL)
    with pytest.raises(ConfigError, match=r"min_score \(5\) must be below max_score \(5\)"):
        engine.create_scorer("criteria", MODEL, options={"criteria": "Concise.", "min_score": 5})
    assert judge.requests == []


def write_host_catalog(folder: Path, body: str) -> Path:
    path = folder / "catalog.yaml"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def test_host_catalog_extends_criteria_with_its_own_criteria(judge: JudgeServer, tmp_path: Path) -> None:
    path = write_host_catalog(
        tmp_path,
        """\
        scorers:
          politeness:
            extends: criteria
            name: Politeness
            description: Whether a support reply is polite.
            options:
              criteria:
                default: The reply greets the customer, stays courteous and never blames them.
              max_score: {default: 3}
        """,
    )
    judge.on("CriteriaEvaluation", {"evaluation": "Courteous throughout.", "score": 2})
    reasons(judge)

    catalog = engine.load_scorers(path)
    result = catalog.create("politeness", MODEL).run("Hello! Sorry for the trouble, here is the fix.")

    assert result.score == 0.5  # (2 - 1) / (3 - 1)
    assert catalog.definition("politeness").name == "Politeness"
    assert "never blames them" in judge.requests_for("CriteriaEvaluation")[0].prompt


def test_host_catalog_extending_criteria_without_criteria_fails_to_load(tmp_path: Path) -> None:
    path = write_host_catalog(
        tmp_path,
        """\
        scorers:
          vague:
            extends: criteria
            name: Vague
            options:
              max_score: {default: 10}
        """,
    )

    with pytest.raises(ConfigError, match="give `criteria`") as raised:
        engine.load_scorers(path)
    assert raised.value.path == str(path)
    assert raised.value.line == 2  # the line of the scorer to fix


def test_summarization_without_claims_stops_after_one_request(judge: JudgeServer) -> None:
    judge.on("Claims", {"claims": []})

    result = engine.create_scorer("summarization", MODEL).run("Well, hm.", input=SOURCE)

    assert result.score == 0
    assert [request.schema_name for request in judge.requests] == ["Claims"]
    assert "makes no claims" in (result.reason or "")

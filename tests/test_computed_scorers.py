"""The computed scorers and quick checks: no judge, no key, no request. Each against cases
worked out by hand (empty input, punctuation, Unicode, long text)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import engine
from engine import ConfigError, NotScorable, RunInputError
from engine.cli import app
from engine.testing import JudgeServer

COMPUTED = [
    "completeness", "content-similarity", "keyword-coverage", "textual-difference", "tone-consistency",
    "tool-call-accuracy-computed", "trajectory-accuracy-computed", "includes", "excludes", "equals", "matches",
    "similarity", "called-tool", "did-not-call", "tool-order", "max-tool-calls", "used-no-tools", "no-tool-errors",
]


def score(scorer_id: str, options: dict[str, Any] | None = None, **run: Any) -> float:
    return engine.create_scorer(scorer_id, options=options).run(**run).score


def calls(*names: str, **args: Any) -> list[dict[str, Any]]:
    """An OpenAI transcript with one call per name (arguments from `args` by name) and a reply."""
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": f"c{index}", "type": "function", "function": {"name": name, "arguments": json.dumps(args.get(name, {}))}}
                for index, name in enumerate(names)
            ],
        },
        {"role": "assistant", "content": "Done."},
    ]


def test_every_computed_scorer_says_it_needs_no_judge_and_the_judge_scorers_say_they_do() -> None:
    catalog = engine.builtin_catalog()
    for scorer_id in COMPUTED:
        assert not catalog.plan(scorer_id).needs_judge, scorer_id
    for scorer_id in ("hallucination", "tool-call-accuracy", "rubric", "classifier"):
        assert catalog.plan(scorer_id).needs_judge
    rows = {row["id"]: row for row in json.loads(CliRunner().invoke(app, ["list", "--json"]).stdout)}
    assert rows["keyword-coverage"]["judge"] is False and rows["hallucination"]["judge"] is True


def test_a_computed_scorer_runs_without_model_or_key_and_makes_no_request(judge: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("SCORERS_MODEL", "openai/would-need-a-key")
    result = engine.create_scorer("keyword-coverage").run("Pandas helps analysis.", input="Data analysis with pandas")
    assert result.score == 0.67  # analysis, pandas of data, analysis, pandas
    assert result.model == "none"
    cli = CliRunner().invoke(app, ["run", "completeness", "--input", "red apples", "--output", "an apple", "--json"])
    assert cli.exit_code == 0, cli.output
    assert json.loads(cli.stdout)["score"] == 0.5
    shown = CliRunner().invoke(app, ["run", "includes", "--output", "Paris is lovely", "--option", "texts=[Paris, Lyon]"])
    assert shown.exit_code == 0, shown.output
    assert "includes: 0 (higher is better)" in shown.stdout and 'check.missing: ["lyon"]' in shown.stdout
    assert judge.requests == []


# --- completeness ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text_input", "output", "expected"),
    [
        ("The quick brown fox jumps over the lazy dog", "A fox jumped over a dog", 0.5),  # fox, jump, dog of 6 stems
        ("Running shoes!", "He runs in shoes.", 1.0),  # stems: run, shoe
        ("", "", 1.0),  # nothing to cover, nothing said
        ("the and of", "bananas", 0.0),  # only stop words to cover, but the output says things
        ("Paris, France", "", 0.0),
        ("Café résumé", "cafe resume", 0.0),  # accents are part of the word
        ("Café résumé", "CAFÉ and Résumé", 1.0),
    ],
)
def test_completeness(text_input: str, output: str, expected: float) -> None:
    assert score("completeness", input=text_input, output=output) == expected


def test_completeness_of_a_long_text_and_its_missing_terms() -> None:
    result = engine.create_scorer("completeness", options={"scale": 10}).run("solar " * 5000 + "wind", input="solar wind hydro")
    assert result.score == 6.67
    assert result.steps["elements"].result["missing"] == ["hydro"]


# --- content-similarity, textual-difference ------------------------------------------------------


def test_content_similarity() -> None:
    assert score("content-similarity", input="Hello   World", output="hello world") == 1
    assert score("content-similarity", options={"ignore_case": False}, input="Hello", output="hello") == 0.8  # 2*4/10
    assert score("content-similarity", input="", output="") == 1
    assert score("content-similarity", input="abc", output="") == 0
    assert score("content-similarity", options={"method": "token_set"}, input="the red car", output="car red the the") == 1
    assert score("content-similarity", input="日本語です", output="日本語だ") == 0.67  # 2*3/9


def test_textual_difference() -> None:
    result = engine.create_scorer("textual-difference").run("sitting", input="kitten")
    assert result.score == 0.62  # 2*4/13
    assert result.steps["difference"].result["changes"] == 3  # k->s, e->i, +g
    assert result.steps["difference"].result["confidence"] == pytest.approx(1 - 1 / 7)
    assert score("textual-difference", input="", output="") == 1
    assert score("textual-difference", input="same text, same punctuation!", output="same text, same punctuation!") == 1
    long_a, long_b = "lorem ipsum " * 2000, "lorem ipsum " * 1999 + "lorem ipsun "
    assert score("textual-difference", input=long_a, output=long_b) == 1.0  # one letter of 24000


# --- keyword-coverage ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text_input", "output", "options", "expected"),
    [
        ("Python data analysis with pandas", "Use pandas for analysis", {}, 0.5),
        ("Python, data; analysis!", "PYTHON data ANALYSIS", {}, 1.0),  # case and punctuation ignored
        ("", "", {}, 1.0),
        ("Running quickly", "she runs", {}, 0.0),
        ("Running quickly", "she runs quickly", {"stem": True}, 1.0),
        ("東京 大阪", "東京", {}, 0.5),
    ],
)
def test_keyword_coverage(text_input: str, output: str, options: dict[str, Any], expected: float) -> None:
    assert score("keyword-coverage", options, input=text_input, output=output) == expected


# --- tone-consistency ---------------------------------------------------------------------------


def test_tone_consistency_between_input_and_output() -> None:
    result = engine.create_scorer("tone-consistency").run("This is terrible and I hate it.", input="I love this, it is great!")
    tone = result.steps["tone"].result
    assert result.score == round(1 - abs(tone["input_sentiment"] - tone["output_sentiment"]) / 2, 2)
    assert result.score < 0.3
    assert score("tone-consistency", input="Thanks, that is great.", output="Great, glad it helps!") > 0.9


def test_tone_consistency_across_the_sentences_of_an_output() -> None:
    result = engine.create_scorer("tone-consistency").run("I love it. I hate it.")
    first, second = result.steps["tone"].result["sentence_sentiments"]
    mean = (first + second) / 2
    assert result.score == round(1 - ((first - mean) ** 2 + (second - mean) ** 2) / 2, 2)
    with pytest.raises(NotScorable, match="tone-consistency: the output is empty"):  # issue 20: it used to score 1, the best
        score("tone-consistency", output="")
    assert score("tone-consistency", output="Good. " * 3000) == 1


# --- tool calls ---------------------------------------------------------------------------------


def test_tool_call_accuracy_computed() -> None:
    transcript = calls("search", "log", "book")
    assert score("tool-call-accuracy-computed", {"tools": ["search", "book"]}, output=transcript) == 1
    assert score("tool-call-accuracy-computed", {"tools": ["search", "book"], "exclusive": True}, output=transcript) == 0.67  # 2 / (2 + 1)
    assert score("tool-call-accuracy-computed", {"tools": ["book", "search"], "order": "relaxed"}, output=transcript) == 0.5
    assert score("tool-call-accuracy-computed", {"tools": ["book", "search"], "order": "strict"}, output=transcript) == 0  # positions 1, 2 are search, log
    assert score("tool-call-accuracy-computed", {"tools": []}, output="No tools needed.") == 1
    assert score("tool-call-accuracy-computed", {"tools": [], "exclusive": True}, output=transcript) == 0


def test_tool_call_accuracy_computed_reads_the_expected_trajectory_and_matches_arguments() -> None:
    transcript = calls("search", search={"q": "Paris", "lang": "fr"})
    expected = [{"tool_name": "search", "args": {"q": "Rome"}}]
    assert score("tool-call-accuracy-computed", output=transcript, expected_trajectory=expected) == 1
    assert score("tool-call-accuracy-computed", {"match_args": True}, output=transcript, expected_trajectory=expected) == 0
    assert score("tool-call-accuracy-computed", {"match_args": True}, output=transcript, expected_trajectory=[{"tool_name": "search", "args": {"q": "Paris"}}]) == 1
    # Without expected tools the item is not scorable (what it lacks, said in one line), not a
    # mistake in the scorer's expression.
    with pytest.raises(NotScorable, match=r"^tool-call-accuracy-computed: no expected tool calls .*pass expected_trajectory="):
        score("tool-call-accuracy-computed", output=transcript)


@pytest.mark.parametrize(
    ("order", "expected", "score_value"),
    [
        ("relaxed", ["search", "book"], 1.0),  # in order, log between
        ("relaxed", ["search", "pay", "book"], 0.67),
        ("strict", ["search", "log", "book"], 1.0),
        ("strict", ["search", "book"], 0.33),  # 1 position of the longer 3
        ("any", ["book", "search", "pay"], 0.67),
    ],
)
def test_trajectory_accuracy_computed(order: str, expected: list[str], score_value: float) -> None:
    assert score("trajectory-accuracy-computed", {"order": order}, output=calls("search", "log", "book"), expected_trajectory=expected) == score_value


def test_trajectory_accuracy_computed_needs_a_trajectory_and_reads_turns() -> None:
    with pytest.raises(RunInputError, match="expected_trajectory"):
        score("trajectory-accuracy-computed", output=calls("search"))
    assert score("trajectory-accuracy-computed", output="No calls.", expected_trajectory=[]) == 1
    assert score("trajectory-accuracy-computed", output="No calls.", expected_trajectory=["search"]) == 0
    turns = [{"role": "user", "content": "Find Paris hotels"}, *calls("search", "book"), {"role": "user", "content": "Thanks"}, {"role": "assistant", "content": "Bye"}]
    # The last reply (after the last user message) has no calls.
    assert score("trajectory-accuracy-computed", turns=turns, expected_trajectory=["search", "book"]) == 0
    assert score("trajectory-accuracy-computed", turns=turns[:3], expected_trajectory=["search", "book"]) == 1


# --- quick checks ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scorer_id", "options", "run", "expected"),
    [
        ("includes", {"texts": ["Paris", "france"]}, {"output": "Paris is in France."}, 1),
        ("includes", {"texts": ["Paris", "Berlin"]}, {"output": "Paris is in France."}, 0),
        ("includes", {"texts": ["Paris", "Berlin"], "all": False}, {"output": "Paris is in France."}, 1),
        ("includes", {"texts": ["paris"], "case_sensitive": True}, {"output": "Paris"}, 0),
        ("includes", {"texts": ["ß"]}, {"output": ""}, 0),
        ("excludes", {"texts": ["sorry", "as an ai"]}, {"output": "As an AI, I cannot."}, 0),
        ("excludes", {"texts": ["sorry"]}, {"output": "Here you go."}, 1),
        ("equals", {}, {"output": "  Hello, World! ", "ground_truth": "hello world"}, 1),
        ("equals", {"normalize": False}, {"output": "Hello, World!", "ground_truth": "hello world"}, 0),
        ("equals", {}, {"output": "", "ground_truth": ""}, 1),
        ("matches", {"pattern": r"^\d{3}-\d{4}$"}, {"output": "555-1234"}, 1),
        ("matches", {"pattern": r"^\d{3}-\d{4}$"}, {"output": "call 555-1234"}, 0),
        ("matches", {"pattern": "ÉTÉ", "ignore_case": True}, {"output": "un été chaud"}, 1),
        ("similarity", {}, {"output": "The colour is red.", "ground_truth": "The color is red."}, 1),  # 0.97
        ("similarity", {"threshold": 0.99}, {"output": "The colour is red.", "ground_truth": "The color is red."}, 0),
        ("called-tool", {"tool": "book"}, {"output": calls("search", "book")}, 1),
        ("called-tool", {"tool": "book", "args": {"id": 7}}, {"output": calls("book", book={"id": 8})}, 0),
        ("called-tool", {"tool": "book", "args": {"id": 7}}, {"output": calls("book", book={"id": 7, "x": 1})}, 1),
        ("did-not-call", {"tool": "delete"}, {"output": calls("search")}, 1),
        ("did-not-call", {"tool": "delete"}, {"output": calls("search", "delete")}, 0),
        ("tool-order", {"tools": ["search", "book"]}, {"output": calls("search", "log", "book")}, 1),
        ("tool-order", {"tools": ["search", "book"], "strict": True}, {"output": calls("search", "log", "book")}, 0),
        ("tool-order", {"tools": ["book", "search"]}, {"output": calls("search", "book")}, 0),
        ("max-tool-calls", {"max": 2}, {"output": calls("a", "b")}, 1),
        ("max-tool-calls", {"max": 0}, {"output": calls("a")}, 0),
        ("used-no-tools", {}, {"output": "Plain answer."}, 1),
        ("used-no-tools", {}, {"output": calls("a")}, 0),
    ],
)
def test_quick_checks(scorer_id: str, options: dict[str, Any], run: dict[str, Any], expected: float) -> None:
    assert score(scorer_id, options, **run) == expected


def test_no_tool_errors_across_message_formats() -> None:
    openai_error = [*calls("search")[:1], {"role": "tool", "tool_call_id": "c0", "content": '{"error": "timeout"}'}]
    anthropic_error = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "search", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "boom", "is_error": True}]},
    ]
    ai_sdk_error = [{"role": "assistant", "parts": [{"type": "tool-search", "toolCallId": "x", "state": "output-error", "input": {}, "errorText": "boom"}]}]
    fine = [*calls("search")[:1], {"role": "tool", "tool_call_id": "c0", "content": '{"hits": 3}'}]
    for transcript in (openai_error, anthropic_error, ai_sdk_error):
        result = engine.create_scorer("no-tool-errors").run(transcript)
        assert result.score == 0 and result.steps["check"].result["failed"] == ["search"]
    assert score("no-tool-errors", output=fine) == 1


@pytest.mark.parametrize(
    ("scorer_id", "message"),
    [("includes", "give `texts`"), ("matches", "give `pattern`"), ("called-tool", "give `tool`"), ("tool-order", "give `tools`"), ("max-tool-calls", "give `max`")],
)
def test_quick_checks_without_their_option_are_refused_when_created(scorer_id: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        engine.create_scorer(scorer_id)


def test_a_host_catalog_writes_its_own_computed_scorer(tmp_path: Path, judge: JudgeServer) -> None:
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(
        """
scorers:
  polite-and-short:
    name: Polite and short
    description: Says please and stays under 20 words.
    direction: higher_is_better
    steps:
      - id: measure
        kind: compute
        values:
          word_count: "output | words | length"
          polite: "'please' in (output | lower | words)"
      - id: score
        kind: score
        score: "(0.5 if measure.polite else 0) + (0.5 if measure.word_count <= 20 else 0)"
""",
        encoding="utf-8",
    )
    scorer = engine.load_scorers(catalog).create("polite-and-short")
    assert scorer.run("Please wait a moment.").score == 1
    assert scorer.run("Wait. " * 30).score == 0
    assert judge.requests == []


def test_a_compute_step_with_a_broken_expression_fails_at_load_with_its_place(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(
        "scorers:\n  broken:\n    name: b\n    description: b\n    direction: higher_is_better\n    steps:\n"
        "      - id: measure\n        kind: compute\n        values:\n          n: \"words(output\"\n"
        "      - id: score\n        kind: score\n        score: \"1\"\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=r"broken\.measure\.values\.n: invalid expression") as caught:
        engine.load_scorers(catalog)
    assert (caught.value.line, caught.value.column) == (10, 20)  # the bracket left open


def test_a_value_reading_a_missing_key_fails_the_run_instead_of_storing_nothing(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(
        "scorers:\n  typo:\n    name: t\n    description: t\n    direction: higher_is_better\n    steps:\n"
        "      - id: measure\n        kind: compute\n        values:\n          first: \"tool_calls[0].args.querry if tool_calls else {}\"\n"
        "      - id: score\n        kind: score\n        score: \"1\"\n",
        encoding="utf-8",
    )
    # A tool's arguments are whatever the agent sent: only the run can tell a key is missing.
    scorer = engine.load_scorers(catalog).create("typo")
    with pytest.raises(ConfigError, match="typo.measure.values.first: .* has no attribute 'querry'"):
        scorer.run(calls("search", search={"query": "q"}))
    # A field every tool call has or lacks is known when the catalog loads.
    catalog.write_text(catalog.read_text(encoding="utf-8").replace("args.querry", "argz"), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"catalog.yaml:10:33: typo.measure.values.first: tool_calls\[0\] has no field 'argz'; did you mean 'args'\?"):
        engine.load_scorers(catalog)


def test_text_scorers_on_punctuation_unicode_and_long_text() -> None:
    # content-similarity keeps punctuation: "hello, world!" (13 characters) and "hello world" (11) share 11
    assert score("content-similarity", input="Hello, world!", output="hello world") == 0.92  # 2*11 / (13 + 11)
    assert score("content-similarity", input="word " * 4000, output="word " * 4000) == 1
    # keyword-coverage over a long output that finally mentions the missing keyword
    assert score("keyword-coverage", input="photosynthesis chlorophyll", output="leaves " * 5000 + "chlorophyll") == 0.5
    # textual-difference counts characters, not bytes: one accented letter changed of 5
    result = engine.create_scorer("textual-difference").run("naïve", input="naive")
    assert result.score == 0.8  # 2*4 / 10
    assert result.steps["difference"].result["changes"] == 1
    # tone-consistency: emoji carry sentiment in VADER; text it has no lexicon for reads as neutral
    assert engine.create_scorer("tone-consistency").run("😀").steps["tone"].result["output_sentiment"] > 0
    assert score("tone-consistency", input="오늘 날씨가 좋네요", output="내일 비가 옵니다") == 1  # both neutral (0)

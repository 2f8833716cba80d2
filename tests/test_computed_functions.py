"""The function library of computed steps, as authors call it from YAML expressions:
hand-worked cases with empty text, punctuation, Unicode and long text."""

from __future__ import annotations

import pytest

from engine import ConfigError
from engine.catalog.expressions import Expression
from engine.errors import ExpressionError, NotScorable


def evaluate(source: str, **variables: object) -> object:
    return Expression(source)(variables)


def test_words_and_sentences_in_any_script() -> None:
    assert evaluate("words(text)", text="Don't stop — e-mail me, café au lait!") == ["Don't", "stop", "e-mail", "me", "café", "au", "lait"]
    assert evaluate("words(text)", text="") == []
    assert evaluate("words(text)", text="Привет, мир") == ["Привет", "мир"]
    assert evaluate("sentences(text)", text="Dr. Smith arrived at 5 p.m. today. He left! Why?") == ["Dr. Smith arrived at 5 p.m. today.", "He left!", "Why?"]
    assert evaluate("sentences(text)", text="   ") == []
    assert evaluate("text | sentences | length", text="Ein Satz. Noch einer.") == 2


def test_normalize_folds_case_punctuation_spaces_and_optionally_accents() -> None:
    assert evaluate("normalize(text)", text="  Hello,   WORLD!!  ") == "hello world"
    assert evaluate("normalize(text)", text="Straße") == "strasse"
    assert evaluate("normalize(text, accents=true)", text="Crème brûlée") == "creme brulee"
    assert evaluate("normalize(text, punctuation=false)", text="A, b") == "a, b"
    assert evaluate("normalize(text)", text=None) == ""


def test_stems_and_keywords() -> None:
    assert evaluate("stems(text)", text="Running runs runner") == ["run", "run", "runner"]
    assert evaluate("stems(text, 'de')", text="Häuser") == ["haus"]
    assert evaluate("keywords(text)", text="The cat sat on the mat, and the CAT purred 3 times.") == ["cat", "sat", "mat", "purred", "times"]
    assert evaluate("keywords(text)", text="") == []
    with pytest.raises(ExpressionError, match="unknown language 'xx'"):
        evaluate("keywords(text, 'xx')", text="a")


def test_similarity_edit_distance_and_diff_worked_by_hand() -> None:
    assert evaluate("similarity(a, b)", a="kitten", b="sitting") == pytest.approx(0.615385)  # 2*4 / 13
    assert evaluate("similarity(a, b)", a="", b="") == 1
    assert evaluate("similarity(a, b)", a="abc", b="") == 0
    assert evaluate("similarity(a, b, 'token_sort')", a="world hello", b="hello world") == 1
    assert evaluate("edit_distance(a, b)", a="kitten", b="sitting") == 3
    assert evaluate("edit_distance(a, b)", a="naïve", b="naive") == 1
    assert evaluate("diff(a, b)", a="abcdef", b="abXdef") == {"ratio": pytest.approx(10 / 12), "changes": 1, "length_difference": 0}
    assert evaluate("diff(a, b)", a="", b="") == {"ratio": 1.0, "changes": 0, "length_difference": 0.0}
    assert evaluate("diff(a, b).changes", a="one two three", b="one 2 three!") == 2
    with pytest.raises(ExpressionError, match="method must be one of"):
        evaluate("similarity(a, b, 'cosine')", a="a", b="b")


def test_sentiment_from_negative_to_positive() -> None:
    assert evaluate("sentiment(text)", text="I love this, it is wonderful!") > 0.5
    assert evaluate("sentiment(text)", text="This is terrible. I hate it.") < -0.5
    assert evaluate("sentiment(text)", text="") == 0
    assert evaluate("sentiment(text)", text="The meeting is at 10.") == 0


def test_matches_and_lookup() -> None:
    assert evaluate("matches(text, '\\\\d{3}-\\\\d{4}')", text="call 555-1234") is True
    assert evaluate("matches(text, 'hello', true)", text="HELLO") is True
    assert evaluate("matches(text, 'hello')", text="HELLO") is False
    with pytest.raises(ExpressionError, match="invalid regular expression"):
        evaluate("matches(text, '(')", text="x")
    calls = [{"tool_name": "search", "args": {"q": "Paris"}}, {"tool_name": "book", "args": {"id": 7}}]
    assert evaluate("lookup(calls, \"[?tool_name=='search'].args.q\")", calls=calls) == ["Paris"]
    assert evaluate("lookup(calls, '[1].args.id')", calls=calls) == 7
    assert evaluate("lookup(calls, '[5].args')", calls=calls) is None
    with pytest.raises(ExpressionError, match="invalid path"):
        evaluate("lookup(calls, '[?')", calls=calls)


CALLS = [{"tool_name": "search", "args": {"q": "Paris", "limit": 5}}, {"tool_name": "log", "args": {}}, {"tool_name": "book", "args": {"id": 7}}]


@pytest.mark.parametrize(
    ("expected", "order", "match_args", "matched", "exact"),
    [
        (["search", "log", "book"], "strict", False, 3, True),
        (["search", "book"], "strict", False, 1, False),  # position 2 is log, not book
        (["search", "book"], "relaxed", False, 2, False),  # in order, log in between
        (["book", "search"], "relaxed", False, 1, False),
        (["book", "search"], "any", False, 2, False),
        ([{"tool_name": "search", "args": {"q": "Paris"}}], "any", True, 1, False),  # extra arguments are fine
        ([{"tool_name": "search", "args": {"q": "Rome"}}], "any", True, 0, False),
        ([{"tool_name": "search", "args": {"q": "Rome"}}], "any", False, 1, False),
        ([], "strict", False, 0, False),
    ],
)
def test_trajectory_match(expected: list[object], order: str, match_args: bool, matched: int, exact: bool) -> None:
    result = evaluate("trajectory_match(calls, expected, order, match_args)", calls=CALLS, expected=expected, order=order, match_args=match_args)
    assert isinstance(result, dict)
    assert (result["matched"], result["exact"], result["expected"], result["actual"]) == (matched, exact, len(expected), 3)
    assert len(result["missing"]) == len(expected) - matched
    assert len(result["extra"]) == 3 - matched


def test_trajectory_match_refuses_a_missing_expectation_and_bad_steps() -> None:
    with pytest.raises(NotScorable, match="no expected tool calls"):
        evaluate("trajectory_match(calls, none)", calls=CALLS)
    with pytest.raises(ExpressionError, match="a trajectory step must be"):
        evaluate("trajectory_match(calls, [3])", calls=CALLS)


def test_tool_errors_finds_flagged_and_error_results() -> None:
    results = [
        {"tool_name": "a", "result": {"ok": True}, "is_error": False},
        {"tool_name": "b", "result": "boom", "is_error": True},
        {"tool_name": "c", "result": {"error": "not found"}, "is_error": False},
        {"tool_name": "d", "result": {"isError": True, "content": []}, "is_error": False},
        {"tool_name": "e", "result": {"error": None}, "is_error": False},
    ]
    assert evaluate("tool_errors(results) | map(attribute='tool_name') | list", results=results) == ["b", "c", "d"]


def test_functions_are_not_a_way_out_of_the_sandbox() -> None:
    with pytest.raises((ExpressionError, ConfigError)):
        evaluate("words.__globals__['re']", text="x")

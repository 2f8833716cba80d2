"""Identical requests of several scorers of one item are sent once (issue 35): in flight,
without a response cache (judge middleware, engine/judge/middleware/shared.py), and through
the cache; hallucination and faithfulness extract claims with the same request, so this
happens by default, and each scorer's verdicts are those it gives alone."""

from __future__ import annotations

import json
from pathlib import Path

from engine import create_scorer, load_scorers, run_evals
from engine.testing import JudgeServer

from helpers.scripted import script_word_overlap

ITEMS = [
    {"id": "paris", "output": "Paris is the capital of France. It has two million inhabitants", "context": ["Paris is the capital of France."]},
    {"id": "rome", "output": "Rome is the capital of Italy. Rome is in Spain", "context": ["Rome is the capital of Italy, on the Tiber."]},
]


def scores(result: object) -> dict[tuple[str, str], float | None]:
    return {(item.id, scorer_id): outcome.score for item in result.items for scorer_id, outcome in item.results.items()}  # type: ignore[attr-defined]


def test_claims_are_extracted_once_for_hallucination_and_faithfulness_without_a_cache(judge: JudgeServer) -> None:
    script_word_overlap(judge)
    alone = {
        scorer_id: scores(run_evals(ITEMS, [create_scorer(scorer_id)], cache=False)) for scorer_id in ("hallucination", "faithfulness")
    }
    judge.requests.clear()

    together = run_evals(ITEMS, [create_scorer("hallucination"), create_scorer("faithfulness")], cache=False)

    assert len(judge.requests_for("Claims")) == len(ITEMS)  # one per item, not one per scorer
    assert scores(together) == {**alone["hallucination"], **alone["faithfulness"]}  # each verdict as alone
    for item in together.items:
        steps = [outcome.result.steps["preprocess"] for outcome in item.results.values() if outcome.result is not None]
        assert [step.result for step in steps][0] == [step.result for step in steps][1]
        assert sorted(step.cached for step in steps) == [False, True]  # one paid for it, the other did not


def test_through_the_cache_the_second_scorer_asks_no_claims(judge: JudgeServer, tmp_path: Path) -> None:
    script_word_overlap(judge)
    cache = tmp_path / "cache.sqlite"
    run_evals(ITEMS, [create_scorer("hallucination")], cache=cache)
    judge.requests.clear()
    run_evals(ITEMS, [create_scorer("faithfulness")], cache=cache)
    assert judge.requests_for("Claims") == [] and len(judge.requests_for("FaithfulnessVerdicts")) == len(ITEMS)


def test_a_scorer_whose_own_rules_refuse_the_shared_answer_asks_for_itself(judge: JudgeServer, tmp_path: Path) -> None:
    (tmp_path / "catalog.yaml").write_text(
        "scorers:\n  picky:\n    extends: hallucination\n    steps:\n      - id: preprocess\n        rules:\n"
        '          - check: "claims | length >= 3"\n            message: "List at least three claims."\n',
        encoding="utf-8",
    )
    script_word_overlap(judge)
    picky = load_scorers(tmp_path / "catalog.yaml").create("picky")
    result = run_evals(ITEMS[:1], [create_scorer("faithfulness"), picky], cache=False)
    # The rule is not in the JSON schema: both asked the same question, the faithfulness one's
    # answer was shared, the picky scorer refused it and asked (and re-asked) for itself.
    assert len(judge.requests_for("Claims")) >= 2
    assert result.items[0].results["faithfulness"].score is not None


def test_different_judges_do_not_share(judge: JudgeServer) -> None:
    script_word_overlap(judge)
    run_evals(ITEMS, [create_scorer("hallucination", model="openai/a"), create_scorer("faithfulness", model="openai/b")], cache=False)
    assert len(judge.requests_for("Claims")) == 2 * len(ITEMS)
    assert {json.loads(json.dumps(request.body))["model"] for request in judge.requests_for("Claims")} == {"a", "b"}

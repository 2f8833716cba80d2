"""`concurrency` counts judge calls in flight, not items: an item waiting for a step's answer
holds no slot, so other items' calls keep the provider busy, and no item (a jury, steps that
run together) can put more calls in flight than the bound."""

from __future__ import annotations

from engine.judge import JudgeSettings
from helpers.scripted import between, script_hallucination
from helpers.jury import CONTEXT, script_panel

from engine import create_hallucination_scorer, run_evals
from engine.testing import JudgeServer


def test_a_jury_never_has_more_calls_in_flight_than_the_concurrency(judge: JudgeServer) -> None:
    script_panel(judge, strict_models={"a"})
    judge.latency = 0.1
    jury = create_hallucination_scorer(options={"context": CONTEXT}, judge=JudgeSettings(models=["openai/a", "openai/b", "openai/c"]))
    items = [{"id": f"i{n}", "input": "q", "output": f"Paris {n}. ODD {n}"} for n in range(4)]

    result = run_evals(items, [jury], concurrency=2, cache=False)

    assert result.counts.completed == 4 and len(judge.requests) == 4 * 3 * 3
    assert judge.max_in_flight == 2  # three judges of two items at once would be six


def test_items_waiting_for_an_answer_leave_their_slot_to_other_items(judge: JudgeServer) -> None:
    script_hallucination(judge)
    judge.latency = 0.2
    items = [{"id": f"i{n}", "input": "q", "output": f"answer {n}. WRONG {n}", "context": ["c"]} for n in range(6)]

    result = run_evals(items, [create_hallucination_scorer()], concurrency=4, cache=False)

    assert result.counts.completed == 6 and [item.id for item in result.items] == [f"i{n}" for n in range(6)]
    order = [(request.schema_name, request.prompt) for request in judge.requests]
    last_claims = max(n for n, (name, prompt) in enumerate(order) if name == "Claims")
    first_reason = min(n for n, (name, _) in enumerate(order) if name == "Reason")
    # The fifth and sixth items asked for their claims while the first four waited for answers,
    # not once one of those had finished (its reason is its last call).
    assert last_claims < first_reason, [(name, between(prompt, "output") if name == "Claims" else "") for name, prompt in order]
    assert judge.max_in_flight == 4

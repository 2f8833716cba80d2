"""A run's judge calls and tokens, per scorer and judge model, as `results` prices them: kept
with each record, and following it when it is saved again, pruned or deleted."""

from __future__ import annotations

from helpers.stored_records import sample_records, usage_figures

from engine import Store
from engine.judge import TokenUsage
from engine.scoring import StepRecord
from engine.store import ResultRecord


def test_calls_and_tokens_are_counted_per_scorer_judge_and_batch_api(store: Store) -> None:
    store.save_many(sample_records())

    assert usage_figures(store, "nightly") == {
        # q1 and q2: preprocess paid (100 and 90 prompt tokens), analyze cached, the reason through the Batch API.
        ("hallucination", "openai/gpt-4o-mini", False): (2, 2, 190, 14, 6, 0),
        ("hallucination", "openai/gpt-4o-mini", True): (2, 0, 80, 24, 0, 8),
        # The jury's calls are its judges' own: one judge's steps, the other kept none.
        ("faithfulness", "openai/a", False): (1, 1, 100, 7, 3, 0),
        ("faithfulness", "openai/a", True): (1, 0, 40, 12, 0, 4),
    }


def test_a_results_usage_follows_it_when_it_is_saved_again_pruned_or_deleted(store: Store) -> None:
    def judged(item: str, prompt_tokens: int, cached: bool = False) -> ResultRecord:
        usage = None if cached else TokenUsage(prompt_tokens=prompt_tokens, completion_tokens=1, total_tokens=prompt_tokens + 1)
        steps = {"claims": StepRecord(id="claims", kind="llm", usage=usage, cached=cached)}
        return ResultRecord(run="r", source="batch", item_id=item, scorer_id="hallucination", model="openai/m", score=0.5, steps=steps)

    store.save_many([judged("a", 100), judged("b", 10), judged("a", 1000)])  # the last of a key wins
    first = usage_figures(store, "r")
    store.save(judged("b", 0, cached=True))  # judged again, answered by the cache
    again = usage_figures(store, "r")
    store.prune_run("r", keep={"b"})
    pruned = usage_figures(store, "r")
    store.delete_run("r")
    store.save(judged("a", 5))  # a new run of the same name starts from nothing
    renewed = usage_figures(store, "r")

    assert first == {("hallucination", "openai/m", False): (2, 0, 1010, 2, 0, 0)}
    assert again == {("hallucination", "openai/m", False): (1, 1, 1000, 1, 0, 0)}
    assert pruned == {("hallucination", "openai/m", False): (0, 1, 0, 0, 0, 0)}
    assert renewed == {("hallucination", "openai/m", False): (1, 0, 5, 1, 0, 0)}

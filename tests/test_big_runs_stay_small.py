"""Big runs stay small: a labelled run streams in flat memory like an unlabelled one, its
agreement with the labels taken as items stream (every item counted, intervals resampled from a
bounded sample), and the disagreements listed are the worst of all of them."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.streamed_memory import streamed

import engine
from engine.runs.measures.stats import SAMPLE_SIZE, WORST_KEPT, AgreementStream, Labelled, agreement_of


@pytest.mark.slow
def test_a_labelled_eval_streams_in_flat_memory_and_counts_every_label() -> None:
    total = 10_000

    def data() -> Iterator[dict[str, Any]]:
        for n in range(total):
            yield {"id": str(n), "input": f"order {n} shipped to Lyon on time", "output": f"Your order {n} shipped to Lyon.",
                   "expected": {"keyword-coverage": n % 3 == 0}}

    result, grown = streamed(data(), total, engine.create_scorer("keyword-coverage"))
    assert result.counts.completed == total and not result.errors
    # Five times the labelled items, about the same memory: nothing grows per labelled item.
    assert grown < 2_000_000, grown
    agreement = result.summary["keyword-coverage"].agreement
    assert agreement is not None and agreement.binary is not None and agreement.labelled == total
    # Every item scores 0.67, which never flags (0.5 and below does): the humans' flags are all missed.
    confusion = agreement.binary.confusion
    assert (confusion.false_negative, confusion.true_negative, confusion.true_positive, confusion.false_positive) == (3_334, 6_666, 0, 0)
    accuracy = agreement.binary.accuracy
    assert accuracy.value == round(6_666 / total, 4) and accuracy.low is not None and accuracy.high is not None
    assert accuracy.low < accuracy.value < accuracy.high
    assert agreement.disagreement_count == 3_334 and len(agreement.disagreements) == WORST_KEPT


def test_agreement_past_the_sample_counts_every_item_and_lists_the_worst_disagreements() -> None:
    picker = random.Random(7)
    items = [Labelled(f"i{n}", n, round(picker.random(), 3), picker.random() < 0.3) for n in range(3 * SAMPLE_SIZE)]

    everything = agreement_of(items, 0.5, "lower_is_better")
    first_part = agreement_of(items[:SAMPLE_SIZE], 0.5, "lower_is_better")

    assert everything.binary is not None and first_part.binary is not None
    judged_flags = sum(item.score > 0.5 for item in items)  # a score on the threshold passes
    assert everything.binary.confusion.true_positive + everything.binary.confusion.false_positive == judged_flags
    wrong = [item for item in items if (item.score > 0.5) != item.expected]
    assert everything.disagreement_count == len(wrong) and len(everything.disagreements) == WORST_KEPT
    worst = sorted(wrong, key=lambda item: (-round(abs(item.score - 0.5), 4), item.index))[:WORST_KEPT]
    assert [found.item_id for found in everything.disagreements] == [item.item_id for item in worst]
    # Three times the items: an interval about sqrt(3) times narrower, around the exact figure.
    for name in ("accuracy", "precision", "recall", "kappa"):
        whole, part = getattr(everything.binary, name), getattr(first_part.binary, name)
        assert whole.low <= whole.value <= whole.high
        narrowing = (whole.high - whole.low) / (part.high - part.low)
        assert 0.4 < narrowing < 0.8, (name, narrowing)


def test_agreement_taken_item_by_item_is_the_agreement_of_the_whole_list() -> None:
    picker = random.Random(11)
    items = [Labelled(f"i{n}", n, round(picker.random(), 2), round(picker.random(), 1)) for n in range(300)]
    stream = AgreementStream(0.5, "higher_is_better")
    for item in items:
        stream.add(item)

    streamed, listed = stream.result(), agreement_of(items, 0.5, "higher_is_better")

    assert streamed == listed and streamed.numeric is not None and streamed.numeric.labelled == 300
    assert streamed.numeric.pearson.value is not None and streamed.numeric.pearson.low is not None

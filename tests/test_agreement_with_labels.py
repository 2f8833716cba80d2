"""Agreement with human labels, told honestly: the figures match hand-computed values, each
comes with a bootstrap interval, and the disagreements are listed worst first."""

from __future__ import annotations

from engine.judge import JudgeSettings
from pathlib import Path

from helpers.scripted import script_hallucination

from engine import as_variant, create_hallucination_scorer, run_compare
from engine.runs import run_evals
from engine.runs.measures.stats import (
    Labelled,
    agreement_of,
    binary_figures,
    bootstrap,
    compare_labelled,
    numeric_figures,
)
from engine.testing import JudgeServer


def test_binary_figures_match_hand_computed_values() -> None:
    # 3 flagged by both, 1 by the judge only, 2 by the humans only, 4 by neither.
    pairs = [(True, True)] * 3 + [(True, False)] + [(False, True)] * 2 + [(False, False)] * 4
    figures = binary_figures(pairs)
    assert figures["accuracy"] == 0.7
    assert figures["precision"] == 0.75
    assert figures["recall"] == 0.6
    assert figures["balanced_accuracy"] == (0.6 + 0.8) / 2
    assert round(figures["f1"] or 0, 4) == round(6 / 9, 4)
    # observed 0.7; chance (4*5 + 6*5) / 100 = 0.5; kappa = 0.2 / 0.5
    assert round(figures["kappa"] or 0, 10) == 0.4


def test_numeric_figures_match_hand_computed_values() -> None:
    figures = numeric_figures([(0, 0), (0.5, 1), (1, 1), (1, 0)])
    assert figures["mean_abs_error"] == 0.375
    assert round(figures["pearson"] or 0, 4) == round(0.25 / 0.6875**0.5, 4)
    # ranks (1, 2, 3.5, 3.5) against (1.5, 3.5, 3.5, 1.5)
    assert round(figures["spearman"] or 0, 4) == round(1 / 18**0.5, 4)


def test_correlation_is_undefined_when_one_side_never_varies() -> None:
    assert numeric_figures([(0.5, 0), (0.5, 1)])["spearman"] is None


def test_bootstrap_interval_brackets_the_figure_and_is_reproducible() -> None:
    pairs = [(True, True)] * 30 + [(False, True)] * 10 + [(False, False)] * 40 + [(True, False)] * 20
    first = bootstrap(len(pairs), lambda picked: binary_figures([pairs[i] for i in picked]))
    again = bootstrap(len(pairs), lambda picked: binary_figures([pairs[i] for i in picked]))
    assert first == again
    accuracy = first["accuracy"]
    assert accuracy.value == 0.7
    assert accuracy.low is not None and accuracy.high is not None
    assert 0.55 < accuracy.low < 0.7 < accuracy.high < 0.85  # about 0.7 +/- 1.96 * sqrt(0.21 / 100)


def test_boolean_labels_through_a_batch_run(judge: JudgeServer) -> None:
    """`expected: true` means the scorer should flag the item: for hallucination (lower is
    better) a score above the threshold, half the scale by default (a score on the line
    passes, as everywhere)."""
    script_hallucination(judge)
    labelled = [
        {"id": "right-pass", "output": "ok", "context": ["c"], "expected": False},
        {"id": "right-flag", "output": "WRONG", "context": ["c"], "expected": True},
        {"id": "half-flag", "output": "ok. WRONG", "context": ["c"], "expected": True},  # 0.5: on the line, so it passes
        {"id": "missed", "output": "ok. ok. ok. WRONG", "context": ["c"], "expected": True},  # 0.25: not flagged
        {"id": "false-alarm", "output": "WRONG. WRONG", "context": ["c"], "expected": {"hallucination": False}},
        {"id": "unlabelled", "output": "ok", "context": ["c"]},
    ]
    agreement = run_evals(labelled, [create_hallucination_scorer()]).summary["hallucination"].agreement
    assert agreement is not None and agreement.binary is not None and agreement.numeric is None
    binary = agreement.binary
    assert (binary.labelled, binary.threshold) == (5, 0.5)
    counts = binary.confusion
    assert (counts.true_positive, counts.false_positive, counts.false_negative, counts.true_negative) == (1, 1, 2, 1)
    assert binary.accuracy.value == 0.4
    assert binary.precision.value == 0.5
    assert binary.recall.value == round(1 / 3, 4)
    # Worst first: the false alarm scores 1.0 (0.5 past the threshold), the misses 0.25 (0.25
    # short) and 0.5 (on the line).
    assert [item.item_id for item in agreement.disagreements] == ["false-alarm", "missed", "half-flag"]
    worst = agreement.disagreements[0]
    assert worst.flagged is True and worst.expected is False and worst.reason == "scripted reason"
    assert [claim for claim in worst.judged["preprocess"]["claims"]] == ["WRONG", "WRONG"]


def test_numeric_labels_through_a_batch_run_with_a_threshold(judge: JudgeServer) -> None:
    script_hallucination(judge)
    labelled = [
        {"id": "a", "output": "ok", "context": ["c"], "expected": {"hallucination": 0}},
        {"id": "b", "output": "WRONG", "context": ["c"], "expected": {"hallucination": 1}},
        {"id": "c", "output": "ok. WRONG", "context": ["c"], "expected": {"hallucination": 1}},
    ]
    summary = run_evals(labelled, [create_hallucination_scorer()], thresholds={"hallucination": 0.2}).summary["hallucination"]
    agreement = summary.agreement
    assert agreement is not None and agreement.numeric is not None and agreement.binary is not None
    assert agreement.numeric.spearman.value == 0.866  # judge 0, 1, 0.5 against humans 0, 1, 1
    # 0 and 1 on a 0..1 scorer are also pass and flag: the judge (flagging above 0.2) agrees on all three.
    assert agreement.binary.confusion.model_dump() == {"true_positive": 2, "false_positive": 0, "false_negative": 0, "true_negative": 1}
    assert agreement.numeric.mean_abs_error.value == round(0.5 / 3, 4)
    assert [(item.item_id, item.gap) for item in agreement.disagreements] == [("c", 0.5)]


def test_comparison_pairs_items_and_names_fixed_and_broken() -> None:
    before = [Labelled("a", 0, 0.9, False), Labelled("b", 1, 0.1, True), Labelled("c", 2, 0.9, True), Labelled("d", 3, 0.0, False)]
    after = [Labelled("a", 0, 0.1, False), Labelled("b", 1, 0.8, True), Labelled("c", 2, 0.2, True), Labelled("d", 3, 0.0, False)]
    comparison = compare_labelled(before, after, names=("v1", "v2"), thresholds=(0.5, 0.5), direction="lower_is_better")
    assert comparison.items == 4
    assert sorted(change.item_id for change in comparison.fixed) == ["a", "b"]
    assert [change.item_id for change in comparison.broken] == ["c"]
    assert comparison.score_changed == 3
    accuracy = next(delta for delta in comparison.figures if delta.name == "accuracy")
    assert (accuracy.baseline, accuracy.variant, accuracy.delta.value, accuracy.improved) == (0.5, 0.75, 0.25, True)
    assert accuracy.beyond_noise is False  # four items cannot tell


def test_agreement_of_reports_both_kinds_when_the_data_mixes_them() -> None:
    labelled = [Labelled("a", 0, 1.0, True), Labelled("b", 1, 0.0, False), Labelled("c", 2, 0.5, 0.5)]
    agreement = agreement_of(labelled, 0.5, "lower_is_better")
    assert agreement.binary is not None and agreement.binary.labelled == 2
    assert agreement.numeric is not None and agreement.numeric.labelled == 1


def test_compare_from_python_as_the_tuning_doc_shows(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = [
        {"id": "a", "output": "ok", "context": ["c"], "expected": {"hallucination": False}},
        {"id": "b", "output": "ok. WRONG", "context": ["c"], "expected": {"hallucination": True}},
    ]
    lenient = as_variant(create_hallucination_scorer(), "lenient")
    strict = as_variant(create_hallucination_scorer(options={"scale": 1}), "strict")
    compared = run_compare(data, lenient, strict, store=tmp_path / "r.sqlite", run="c", thresholds={"hallucination@lenient": 0.6, "hallucination@strict": 0.4})
    assert set(compared.result.summary) == {"hallucination@lenient", "hallucination@strict"}
    # 0.5 passes under the lenient threshold (0.6) and is flagged under the strict one (0.4).
    assert [change.item_id for change in compared.comparison.fixed] == ["b"]
    assert compared.result.summary["hallucination@strict"].agreement.binary.f1.value == 1.0


def test_a_jury_becomes_a_variant_as_a_single_judge_does(judge: JudgeServer) -> None:
    jury = create_hallucination_scorer(judge=JudgeSettings(models=["openai/a", "openai/b"]))
    renamed = as_variant(jury, "panel")
    assert renamed.id == "hallucination@panel" and jury.id == "hallucination"
    assert [member.id for member in renamed.scorers] == ["hallucination@panel"] * 2  # type: ignore[union-attr]

"""A scorer's pass line has one home: the definition's `threshold:` (else half the scale) is
worked out when the scorer is made, a run's `--threshold` moves it in one place, and the
verdict, the agreement with people, a review queue made from the run and `calibrate` all
measure the same scores against the same line, a score on the line passing in each."""

from __future__ import annotations

from pathlib import Path

import engine
from engine.catalog.queues import QueueSpec
from engine.runs.labels import queue_from_run, read_queue
from engine.runs.tuning import calibration, labelled_of
from engine.scoring.pass_line import PassLine
from engine.store import open_store

CATALOG = """
scorers:
  length-share:
    name: Length share
    description: A quarter per word, up to three words.
    direction: higher_is_better
    threshold: 0.75
    steps:
      - id: measure
        kind: compute
        values:
          words: "output | words | length"
      - id: score
        kind: score
        score: "measure.words / 4"
"""

# Scores 0.25, 0.5 and 0.75 (exact in binary): their mean is 0.5. People flag the first only.
ITEMS = [
    {"id": "one", "output": "short", "expected": True},
    {"id": "two", "output": "two words", "expected": False},
    {"id": "three", "output": "three whole words", "expected": False},
]


def _scorer(tmp_path: Path) -> engine.AnyScorer:
    path = tmp_path / "catalog.yaml"
    path.write_text(CATALOG, encoding="utf-8")
    return engine.load_scorers(path).create("length-share")


def test_the_line_is_worked_out_once_and_a_run_moves_it_in_one_place(tmp_path: Path) -> None:
    scorer = _scorer(tmp_path)

    assert scorer.pass_line == PassLine(0.75, "higher_is_better", 1.0, "definition")
    moved = scorer.pass_line.overridden(0.5)
    assert (moved.value, moved.gate, moved.passes(0.5), moved.flags(0.25)) == (0.5, 0.5, True, True)
    assert scorer.pass_line.overridden(None) is scorer.pass_line
    # Nobody set a line: half the scale flags, and no gate holds the mean to it.
    default = PassLine.of(None, "lower_is_better", 10.0)
    assert (default.value, default.gate, default.passes(5.0), default.flags(5.5)) == (5.0, None, True, True)
    assert default.on_scale(4.0).value == 2.0 and scorer.pass_line.on_scale(4.0).value == 0.75


def test_a_run_threshold_moves_the_verdict_the_agreement_the_queue_and_calibrate_alike(tmp_path: Path) -> None:
    scorer = _scorer(tmp_path)
    store = tmp_path / "results.sqlite"

    own = engine.run_evals(ITEMS, [scorer], store=store, run="own", cache=False)
    moved = engine.run_evals(ITEMS, [scorer], thresholds={"length-share": 0.5}, store=store, run="moved", keep_results=True, cache=False)

    # The definition's line (0.75) fails a mean of 0.5; the run's (0.5) passes it, on the line.
    assert not own.passed and "needs at least 0.75" in " ".join(own.verdict.reasons)
    assert moved.passed and moved.verdict.scorers["length-share"].threshold == 0.5
    # People flag exactly the scores below 0.5: at the run's line the judge agrees with all.
    agreement = moved.summary["length-share"].agreement
    assert agreement is not None and agreement.binary is not None
    assert agreement.binary.threshold == 0.5 and agreement.binary.accuracy is not None and agreement.binary.accuracy.value == 1.0
    # A queue made from the run reads the run's line: only the score on it is near it.
    opened = open_store(store)
    assert opened is not None
    queue = queue_from_run(opened, QueueSpec(name="near-the-line", scorer="length-share"), "moved", filters=["near:0.1"])
    assert queue.threshold == 0.5
    assert [item.item_id for item in read_queue(opened, "near-the-line", fields=False).items] == ["two"]
    # Calibrate sweeps the same scores: at 0.5 it flags what the run flagged, and agrees fully.
    swept = calibration(scorer, labelled_of(moved, "length-share"))
    at_the_line = next(point for point in swept.points if point.threshold == 0.5)
    assert (at_the_line.flagged, at_the_line.f1) == (1, 1.0)


def test_every_command_that_asks_a_judge_takes_the_same_judge_flags() -> None:
    import click
    import typer

    from engine.cli import app

    group = typer.main.get_command(app)
    wanted = {"--model", "--aggregate", "--base-url", "--mode", "--timeout", "--retries", "--rpm", "--tpm", "--escalate-to", "--escalate-margin"}
    for name in ("eval", "run", "results", "compare", "calibrate", "rescore", "pairwise", "align", "workbench"):
        with click.Context(group) as context:
            command = group.get_command(context, name)  # type: ignore[attr-defined]
        assert command is not None
        taken = {flag for parameter in command.params for flag in parameter.opts}
        assert wanted <= taken, f"scorers {name} lacks {sorted(wanted - taken)}"

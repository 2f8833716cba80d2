"""A stored run read back: `scorers results --run` and the report take their figures from the
store's aggregates (the same functions), a big run's page lists its worst items and a sample
with their count and the export command, and items the scorer could not judge show as not
scorable (with the reason), never as a green pass."""

from __future__ import annotations

import json
import time
from pathlib import Path

from helpers.stored_records import record
from typer.testing import CliRunner

from engine import RunInfo, SQLiteStore
from engine.cli import app
from engine.report import build_report, render_report
from engine.report.build import EVERY_ITEM_UP_TO
from engine.runs.measures.stats import agreement_of, Labelled

runner = CliRunner()


def big_run(path: Path, items: int) -> None:
    with SQLiteStore(path) as store:
        store.begin_run(RunInfo(name="big", meta={"scorers": {"hallucination": {"flag_threshold": 0.5}}}))
        records = []
        for n in range(items):
            unscorable = n % 10 == 0
            records.append(
                record(
                    "big", f"item-{n}", score=None if unscorable else (n % 100) / 100, direction="lower_is_better", item_index=n + 1,
                    output=f"answer {n}", reason=None if unscorable else f"reason {n}", expected=None if unscorable else n % 3 == 0,
                    not_scorable="the output is empty" if unscorable else None,
                )
            )
        store.save_many(records)
        store.end_run("big", "complete")


def test_not_scorable_items_are_shown_and_counted_as_such_not_as_a_pass(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    big_run(path, 10)
    with SQLiteStore(path) as store:
        report = build_report(store, "big")
    html = render_report(report)

    (section,) = report.sections
    assert section.stats.not_scorable == 1 and section.stats.count == 9
    (empty,) = [row for row in report.items if row.item_id == "item-0"]
    (cell,) = empty.cells
    assert cell.not_scorable == "the output is empty" and cell.flagged is None and cell.score is None
    assert '<td class="num" data-figure="not_scorable">1</td>' in html
    row_html = html.split('data-id="item-0"', 1)[1].split("</tbody>", 1)[0]
    assert "not scorable" in row_html and "the output is empty" in row_html and 'class="pass"' not in row_html

    shown = runner.invoke(app, ["results", "--run", "big", "--store", str(path), "--json"])
    (scorer,) = json.loads(shown.output)["scorers"]
    assert (scorer["not_scorable"], scorer["count"], scorer["mean"]) == (section.stats.not_scorable, section.stats.count, section.stats.mean)


def test_a_big_runs_page_lists_its_worst_items_and_a_sample_and_says_where_the_rest_is(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    items = EVERY_ITEM_UP_TO * 3
    big_run(path, items)

    written = runner.invoke(app, ["report", "big", "--store", str(path), "-o", str(tmp_path / "big.html")])

    assert written.exit_code == 0, written.output
    html = (tmp_path / "big.html").read_text(encoding="utf-8")
    listed = html.count('<tbody class="item"')
    assert 50 <= listed <= 400
    assert f"{listed:,} of {items:,} items listed" in html and "scorers results --run big --format csv" in html
    assert f"{listed} of {items} items listed" in " ".join(written.output.split())
    # The worst of a lower-is-better scorer are the highest scores: 0.99 is among them.
    assert 'data-id="item-99"' in html
    assert len(html) < 2_000_000


def test_agreement_on_many_labels_is_quick_and_its_interval_still_holds_the_figure() -> None:
    labelled = [Labelled(f"i{n}", n, (n % 100) / 100, n % 3 == 0) for n in range(50_000)]
    started = time.perf_counter()

    agreement = agreement_of(labelled, 0.5, "lower_is_better")

    assert time.perf_counter() - started < 15
    accuracy = agreement.binary.accuracy if agreement.binary else None
    assert accuracy is not None and accuracy.low is not None and accuracy.high is not None and accuracy.value is not None
    assert accuracy.low <= accuracy.value <= accuracy.high and accuracy.high - accuracy.low < 0.02


def test_the_full_export_of_a_big_run_is_read_a_chunk_at_a_time_and_keeps_the_datas_order(tmp_path: Path) -> None:
    import csv

    path = tmp_path / "r.sqlite"
    big_run(path, 1_234)  # more than two chunks of the export

    written = runner.invoke(app, ["results", "--run", "big", "--store", str(path), "--format", "csv", "-o", str(tmp_path / "all.csv")])
    as_json = runner.invoke(app, ["results", "--run", "big", "--store", str(path), "--format", "json"])

    assert written.exit_code == 0 and "wrote 1234 record(s) of run big" in written.output, written.output
    with (tmp_path / "all.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["item_id"] for row in rows] == [f"item-{n}" for n in range(1_234)]
    assert [record["item_id"] for record in json.loads(as_json.output)] == [f"item-{n}" for n in range(1_234)]

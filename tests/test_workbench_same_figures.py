"""The workbench shows the figures the command line prints: labels are read by one function
(0/1 labels on a scorer scored from 0 to 1 are pass/flag, with the confusion matrix, F1 and
kappa, here as in `scorers eval` and `scorers calibrate`), the data set given with --data is
the one selected, and aligned variants are offered honestly. In Chromium."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.scripted import script_word_overlap
from typer.testing import CliRunner
from helpers.workbench_pages import NUMERIC, PAIRS, Tab, browser_context, ok, started, wait_run  # noqa: F401 (fixtures)

from engine.cli import app
from engine.testing import JudgeServer

runner = CliRunner()


def _figure(value: float | None) -> str:
    """A figure as the page (and the CLI) prints it: three decimals at most."""
    return "-" if value is None else str(float(round(value, 3))).removesuffix(".0")


def test_0_1_labels_get_the_matrix_f1_and_kappa_of_scorers_eval_and_calibrate(judge: JudgeServer, browser_context: Any, tmp_path: Path) -> None:
    script_word_overlap(judge)
    shown = runner.invoke(app, ["eval", str(NUMERIC), "--scorer", "hallucination", "--store", str(tmp_path / "cli.sqlite"), "--json"])
    assert shown.exit_code in (0, 1), shown.output
    cli = json.loads(shown.stdout)["summary"]["hallucination"]["agreement"]
    assert cli["binary"] is not None and cli["numeric"] is not None  # 0/1 labels: pass/flag, and numbers
    calibrated = runner.invoke(app, ["calibrate", str(NUMERIC), "--scorer", "hallucination", "--store", str(tmp_path / "cli.sqlite"), "--json"])
    best = json.loads(calibrated.stdout)["best"]

    with started(tmp_path / "mine", tmp_path / "results.sqlite", data=NUMERIC) as workbench:
        tab = Tab(browser_context, workbench).open().sample(20)
        assert tab.page.input_value("#data") == str(NUMERIC)
        tab.page.click("#tab-run")
        tab.page.click("#run")
        tab.page.wait_for_selector("#view-results:not([hidden]) #agreement tr[data-figure='f1']")
        assert "numeric labels" not in tab.text("#confusion")
        confusion = cli["binary"]["confusion"]
        assert tab.text("#confusion [data-cell='true_positive']") == str(confusion["true_positive"])
        assert tab.text("#confusion [data-cell='true_negative']") == str(confusion["true_negative"])
        for name in ("f1", "kappa", "accuracy"):
            assert tab.page.locator(f"#agreement tr[data-figure='{name}'] td").first.inner_text() == _figure(cli["binary"][name]["value"]), name
        assert tab.page.locator("#agreement tr[data-figure='mean_abs_error'] td").first.inner_text() == _figure(cli["numeric"]["mean_abs_error"]["value"])
        tab.page.click("#calibrate")
        tab.page.wait_for_selector("#calibration:has-text('Best threshold')")
        assert tab.text("#calibration").startswith(f"Best threshold {_figure(best['threshold'])}: F1 {_figure(best['f1'])}, kappa {_figure(best['kappa'])}")

        # Saved: the Versions view has the same figures, not "- - -".
        tab.page.keyboard.press("Control+s")
        tab.page.click("#save-confirm")
        wait_run(workbench)
        tab.page.click("#tab-versions")
        row = tab.page.locator("#versions tr[data-version='1']")
        row.wait_for()
        cells = row.locator("td")
        assert cells.nth(1).inner_text() == "20 of 20 items scored"
        assert cells.nth(2).inner_text().splitlines()[0] == _figure(cli["binary"]["f1"]["value"])
        assert cells.nth(3).inner_text() == _figure(cli["binary"]["kappa"]["value"])
        assert tab.errors == []


def test_the_data_set_given_is_the_one_selected_not_the_last_version_s(judge: JudgeServer, browser_context: Any, tmp_path: Path) -> None:
    script_word_overlap(judge)
    with started(tmp_path / "mine", tmp_path / "results.sqlite", data=PAIRS, drafts=tmp_path / "drafts") as workbench:
        ok(workbench, "save", {"scorer": "hallucination", "data": str(PAIRS), "size": 6, "seed": 4, "files": {}, "bases": {}})
        wait_run(workbench)
    with started(tmp_path / "mine", tmp_path / "results.sqlite", data=NUMERIC, drafts=tmp_path / "drafts") as workbench:
        tab = Tab(browser_context, workbench).open()
        assert tab.page.input_value("#data") == str(NUMERIC)
        tab.page.click("#tab-run")
        assert (tab.page.input_value("#size"), tab.page.input_value("#seed")) == ("20", "0")
        options = [option.get_attribute("value") for option in tab.page.locator("#data option").all()]
        assert options.count(str(NUMERIC)) == 1 and options[0] == str(NUMERIC)
        tab.page.wait_for_selector("#estimate:has-text('20 items')")


def test_versions_are_the_catalog_s_own_when_catalogs_share_a_store(judge: JudgeServer, tmp_path: Path) -> None:
    script_word_overlap(judge)
    body = {"scorer": "hallucination", "data": str(PAIRS), "size": 2, "seed": 0, "files": {}, "bases": {}}
    with started(tmp_path / "first", tmp_path / "results.sqlite", data=PAIRS) as workbench:
        assert ok(workbench, "save", body)["version"] == 1
        wait_run(workbench)
    with started(tmp_path / "second", tmp_path / "results.sqlite", data=PAIRS) as workbench:
        assert ok(workbench, "versions", {"scorer": "hallucination"})["versions"] == []
        assert ok(workbench, "scorer", {"scorer": "hallucination", "files": {}})["last_version"] is None
        saved = ok(workbench, "save", body)
        assert saved["version"] == 2 and saved["run"]["run"] == "workbench-hallucination-v2"  # no clash with the first catalog's v1
        wait_run(workbench)
        assert [version["version"] for version in ok(workbench, "versions", {"scorer": "hallucination"})["versions"]] == [2]

"""An aligned variant in the workbench: `scorers align -o` run into the catalog folder leaves a
variant there; the workbench lists it for its scorer with align's own figures and diff, and
Accept brings its changes into the catalog through the usual Save (diff first, version kept)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import yaml
from helpers.workbench_pages import PAIRS, ROOT, call, wait_run, workbench  # noqa: F401 (the fixture)

from engine import load_scorers
from engine.catalog import builtin_catalog
from engine.runs.align.results import AlignResult, SplitSizes
from engine.runs.align.variants import Change, Workshop
from engine.runs.align.write import write_variant
from engine.runs.results import Comparison, FigureDelta, FigureEstimate, VerdictChange
from engine.workbench.server import Workbench

SENTENCE = "A claim the context does not state outright is a hallucination."


def _aligned(folder: Path, tmp_path: Path) -> str:
    """A variant of the built-in hallucination scorer written by align's own writer: its
    judging template with one sentence more, and a calibrated threshold."""
    workshop = Workshop(builtin_catalog(), "hallucination", {}, tmp_path / "candidates")
    _, source = workshop.step_template()
    change = Change(template=source.replace("Decide,", f"{SENTENCE}\nDecide,", 1), threshold=0.4)
    kappa = FigureDelta(name="kappa", title="Cohen's kappa", baseline=0.41, variant=0.73, delta=FigureEstimate(value=0.32, low=0.12, high=0.5), improved=True, beyond_noise=True)
    test = Comparison(baseline="before", variant="after", items=30, figures=[kappa], fixed=[VerdictChange(item_id="subtle-3", expected=True, baseline_score=0.0, variant_score=1.0)])
    result = AlignResult(
        scorer_id="hallucination", metric="kappa", seed=0, split=SplitSizes(train=50, dev=30, test=30), baseline_dev=0.4, baseline_threshold=0.5,
        chosen=["instructions: a claim not stated outright counts"], threshold=0.4, test=test, accepted=True, verdict="Accepted: kappa 0.41 -> 0.73.",
    )
    write_variant(workshop, change, result, folder)
    return change.template or ""


def test_an_aligned_variant_is_listed_with_align_s_figures_and_accepted_through_save(workbench: Workbench, tmp_path: Path) -> None:
    template = _aligned(tmp_path / "mine" / "variants" / "aligned", tmp_path)
    status, found = call(workbench, "aligned", {"scorer": "hallucination"})
    assert status == 200, found
    [variant] = found["variants"]
    assert variant["folder"] == "variants/aligned" and variant["verdict"] == "Accepted: kappa 0.41 -> 0.73."
    [kappa] = variant["test"]["figures"]
    assert (kappa["baseline"], kappa["variant"], kappa["delta"]) == (0.41, 0.73, {"value": 0.32, "low": 0.12, "high": 0.5})
    assert f"+{SENTENCE}" in variant["diff"] and variant["threshold"] == 0.4
    assert call(workbench, "aligned", {"scorer": "faithfulness"})[1] == {"variants": []}

    body = {"scorer": "hallucination", "folder": "variants/aligned", "files": {}}
    status, accepted = call(workbench, "accept", body)
    assert status == 200, accepted
    assert not (tmp_path / "mine" / "scorers.yaml").exists()  # shown, not written, until Save
    assert [change["path"] for change in accepted["changes"]] == ["scorers.yaml", "prompts/aligned/hallucination/analyze.j2"]
    assert f"+{SENTENCE}" in accepted["changes"][1]["diff"]

    status, saved = call(workbench, "save", {"scorer": "hallucination", "data": str(PAIRS), "size": 4, "seed": 0, "files": accepted["files"], "bases": accepted["bases"]})
    assert status == 200, saved
    assert saved["version"] == 1 and wait_run(workbench)["status"] == "complete"
    catalog = load_scorers(tmp_path / "mine" / "scorers.yaml")
    assert catalog.definition("hallucination").threshold == 0.4
    assert (tmp_path / "mine" / "prompts" / "aligned" / "hallucination" / "analyze.j2").read_text(encoding="utf-8") == template
    entry = yaml.safe_load((tmp_path / "mine" / "scorers.yaml").read_text(encoding="utf-8"))["scorers"]["hallucination"]
    assert entry["extends"] == "hallucination" and entry["steps"][0]["prompt"] == "aligned/hallucination/analyze.j2"


def test_a_variant_of_the_built_in_scorer_is_not_accepted_over_the_catalog_s_own(workbench: Workbench, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "scorers.yaml").write_text("# my own\nprompts: prompts\nscorers:\n  hallucination:\n    extends: hallucination\n    threshold: 0.2\n", encoding="utf-8")
    _aligned(mine / "aligned", tmp_path)
    status, refused = call(workbench, "accept", {"scorer": "hallucination", "folder": "aligned", "files": {}})
    assert status == 400
    assert refused["error"].startswith("aligned: aligned from the built-in hallucination, but this catalog writes its own hallucination")
    status, refused = call(workbench, "accept", {"scorer": "hallucination", "folder": "../elsewhere", "files": {}})
    assert status == 400 and refused["error"].startswith("../elsewhere: no aligned variant there")


def test_a_variant_of_the_catalog_s_own_scorer_replaces_its_entry_and_keeps_the_rest_of_the_file(workbench: Workbench, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    own = "# my own\nprompts: prompts\nscorers:\n  hallucination:  # tuned by hand\n    extends: hallucination\n    threshold: 0.2\n\n# the end\n"
    (mine / "scorers.yaml").write_text(own, encoding="utf-8")
    workshop = Workshop(load_scorers(mine / "scorers.yaml"), "hallucination", {}, tmp_path / "candidates")
    _, source = workshop.step_template()
    result = AlignResult(
        scorer_id="hallucination", metric="kappa", seed=0, split=SplitSizes(train=1, dev=1, test=1), baseline_dev=0.4, baseline_threshold=0.2,
        chosen=["instructions"], test=Comparison(baseline="a", variant="b", items=1), accepted=True, verdict="Accepted.",
    )
    write_variant(workshop, Change(template=source.replace("Decide,", f"{SENTENCE}\nDecide,", 1)), result, mine / "aligned")
    status, accepted = call(workbench, "accept", {"scorer": "hallucination", "folder": "aligned", "files": {}})
    assert status == 200, accepted
    text = accepted["files"]["scorers.yaml"]
    assert text.startswith("# my own\nprompts: prompts\nscorers:\n  hallucination:\n") and text.endswith("\n\n# the end\n")
    entry = yaml.safe_load(text)["scorers"]["hallucination"]
    assert entry["threshold"] == 0.2 and "aligned/hallucination/analyze.j2" in [step.get("prompt") for step in entry["steps"]]


@pytest.mark.slow
def test_accept_in_the_page_shows_the_diff_then_saves(workbench: Workbench, chromium: Any, tmp_path: Path) -> None:
    template = _aligned(tmp_path / "mine" / "variants" / "aligned", tmp_path)
    page = chromium.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(60_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(workbench.url)
    page.select_option("#scorer", "hallucination")
    page.click("#tab-versions")
    variant = page.locator("#aligned section[data-folder='variants/aligned']")
    assert "Accepted: kappa 0.41 -> 0.73." in variant.inner_text() and "0.12 to 0.5" in variant.inner_text()
    variant.get_by_role("button").click()
    page.wait_for_selector("#save-dialog[open]")
    assert f"+{SENTENCE}" in page.locator("#diffs").inner_text()
    assert not (tmp_path / "mine" / "scorers.yaml").exists()
    page.click("#save-confirm")
    page.wait_for_function("document.querySelector('#progress-text').textContent.includes('recording version 1')")
    assert (tmp_path / "mine" / "prompts" / "aligned" / "hallucination" / "analyze.j2").read_text(encoding="utf-8") == template
    assert errors == []


def test_a_variant_measured_against_a_built_in_file_the_catalog_overrides_is_flagged(workbench: Workbench, chromium: Any, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    (mine / "prompts" / "hallucination").mkdir(parents=True)
    own = (ROOT / "prompts" / "hallucination" / "analyze.j2").read_text(encoding="utf-8").replace("Decide,", "My own wording. Decide,")
    (mine / "prompts" / "hallucination" / "analyze.j2").write_text(own, encoding="utf-8")
    _aligned(mine / "variants" / "aligned", tmp_path)
    found = call(workbench, "aligned", {"scorer": "hallucination"})[1]
    [variant] = found["variants"]
    assert "against the built-in hallucination" in variant["warning"] and "prompts/hallucination/analyze.j2" in variant["warning"]
    page = chromium.new_page(viewport={"width": 1280, "height": 800})
    page.goto(workbench.url)
    page.wait_for_function("window.workbenchReady === true")
    page.click("#tab-versions")
    shown = page.locator("#aligned section[data-folder='variants/aligned'] .warning")
    assert "against the built-in hallucination" in shown.inner_text() and shown.is_visible()


def test_an_accepted_variant_is_no_longer_offered(workbench: Workbench, chromium: Any, tmp_path: Path) -> None:
    _aligned(tmp_path / "mine" / "variants" / "aligned", tmp_path)
    page = chromium.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(60_000)
    page.goto(workbench.url)
    page.wait_for_function("window.workbenchReady === true")
    page.click("#tab-run")
    page.fill("#size", "2")
    page.click("#tab-versions")
    variant = page.locator("#aligned section[data-folder='variants/aligned']")
    variant.get_by_role("button", name="Accept variants/aligned…").click()
    page.click("#save-confirm")
    page.wait_for_selector("#versions tr[data-version='1']")
    page.wait_for_selector("#aligned section[data-folder='variants/aligned'] .accepted")
    assert "Accepted in v1" in variant.inner_text()
    assert variant.get_by_role("button").count() == 0
    [listed] = call(workbench, "aligned", {"scorer": "hallucination"})[1]["variants"]
    assert listed["accepted_in"] == 1

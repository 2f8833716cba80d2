"""Clear words and places in the workbench: every problem names a file the tuner can open
(never a temporary draft folder nor the installed package's path) and opens it at its line
when clicked; the checker's own words are shown, whatever they are; the preview shows every
step before a run (answers from the response cache or the last run of the item, else an offer
to run that item, its cost shown) and says when it is out of date; and a missing judge is
said in one clean line. In Chromium."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from helpers.scripted import script_word_overlap
from helpers.workbench_pages import PAIRS, ROOT, Tab, browser_context, ok, started  # noqa: F401 (fixtures)

from engine.catalog.source import builtin_catalog_path
from engine.testing import JudgeServer
from engine.workbench.workspace import Workspace

SCHEMA = "schemas/hallucination_verdicts.yaml"
ANALYZE = "prompts/hallucination/analyze.j2"
EXTRACT = "prompts/claims/extract.j2"
# Where the installed package keeps its scorers: this checkout when installed editable, the
# site-packages copy when installed as a newcomer does (`pip install .`).
INSTALLED = builtin_catalog_path().resolve().parent


def _internal(text: str) -> list[str]:
    """Paths a tuner cannot open: a temporary draft, the installed package's own files."""
    return [found for found in ("scorers-workbench-", "/draft-", "_catalog/", str(INSTALLED / "scorers.yaml"), str(INSTALLED / "prompts"), str(INSTALLED / "schemas")) if found in text]


def _caret_line(tab: Tab, pane: str) -> int:
    return int(tab.page.locator(f"#{pane} textarea").evaluate("area => area.value.slice(0, area.selectionStart).split('\\n').length"))


def _click_problem(tab: Tab, path: str) -> None:
    tab.page.locator(f"#problems button.problem[data-path='{path}']").first.click()
    tab.page.wait_for_function(f"[...document.querySelectorAll('.pane')].some((pane) => pane.dataset.path === {path!r})")


def test_problems_name_files_the_tuner_can_open_and_open_them_at_their_line(judge: JudgeServer, browser_context: Any, tmp_path: Path) -> None:
    with started(tmp_path / "mine", tmp_path / "results.sqlite", data=PAIRS) as workbench:
        tab = Tab(browser_context, workbench).open()
        # A field renamed in the built-in answer schema: the built-in definition and reason template read it.
        tab.edit("pane-b", SCHEMA, lambda text: re.sub(r"\bverdict\b(?=[:\],])", "decision", text))
        tab.page.wait_for_selector("#problems button.problem[data-path='built-in:scorers.yaml']")
        shown = [button.inner_text() for button in tab.page.locator("#problems button.problem").all()]
        assert shown and all(not _internal(text) for text in shown), shown
        builtin_line = next(int(text.split(":")[1]) for text in shown if text.startswith("built-in scorers.yaml:"))

        _click_problem(tab, "built-in:scorers.yaml")
        assert tab.page.input_value("#pane-b .file-pick") == "built-in:scorers.yaml"
        assert tab.page.locator("#pane-b textarea").get_attribute("readonly") is not None
        assert _caret_line(tab, "pane-b") == builtin_line
        assert tab.page.locator(f"#pane-b .gutter div.bad[data-line='{builtin_line}']").count() == 1
        assert "definition your catalog extends" in tab.text("#pane-b .origin")

        _click_problem(tab, "prompts/hallucination/reason.j2")
        assert tab.page.input_value("#pane-b .file-pick") == "prompts/hallucination/reason.j2"
        reason_line = next(int(text.split(":")[1]) for text in shown if text.startswith("built-in prompts/hallucination/reason.j2:"))
        assert _caret_line(tab, "pane-b") == reason_line
        assert tab.errors == []


def test_a_problem_in_a_file_of_another_scorer_opens_it(judge: JudgeServer, browser_context: Any, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    (mine / "prompts" / "other").mkdir(parents=True)
    broken = (ROOT / ANALYZE).read_text(encoding="utf-8").replace("preprocess.claims | length", "preprocess.clams | length")
    (mine / "prompts" / "other" / "analyze.j2").write_text(broken, encoding="utf-8")
    (mine / "scorers.yaml").write_text(
        "prompts: prompts\nscorers:\n  first:\n    extends: hallucination\n  second:\n    extends: hallucination\n"
        "    steps:\n      - id: analyze\n        prompt: other/analyze.j2\n",
        encoding="utf-8",
    )
    line = next(number for number, text in enumerate(broken.splitlines(), 1) if "clams" in text)
    with started(mine, tmp_path / "results.sqlite", data=PAIRS) as workbench:
        tab = Tab(browser_context, workbench).open()
        tab.page.select_option("#scorer", "first")
        tab.page.wait_for_selector("#problems button.problem[data-path='prompts/other/analyze.j2']")
        assert "prompts/other/analyze.j2" not in [option.get_attribute("value") for option in tab.page.locator("#pane-b .file-pick option").all()]
        text = tab.page.locator("#problems button.problem").first.inner_text()
        assert f"mine/prompts/other/analyze.j2:{line}:" in text and not _internal(text)
        _click_problem(tab, "prompts/other/analyze.j2")
        assert tab.page.input_value("#pane-b .file-pick") == "prompts/other/analyze.j2"
        assert _caret_line(tab, "pane-b") == line
        assert tab.page.locator("#pane-b textarea").get_attribute("readonly") is None  # a file of yours: editable


def test_messages_name_the_catalog_folder_never_a_temporary_draft(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "mine", shown_relative_to=tmp_path)
    try:
        draft = workspace.draft({"prompts/x.j2": "{{ output }}"})
        message = f"template error in {draft.parent}/prompts/x.j2 (included from {INSTALLED / 'prompts' / 'claims' / 'extract.j2'}, read by {INSTALLED / 'scorers.yaml'})"
        assert workspace.words(message) == "template error in mine/prompts/x.j2 (included from built-in prompts/claims/extract.j2, read by built-in scorers.yaml)"
        [_, change] = workspace.diff({ANALYZE: "x\n"})
        assert change["diff"].startswith(f"--- built-in {ANALYZE}\n+++ b/{ANALYZE}\n")  # the diff of a save names no installed path
    finally:
        workspace.close()


def _catalog_with(tmp_path: Path, catalog: str, files: dict[str, str] | None = None, name: str = "mine") -> Path:
    mine = tmp_path / name
    mine.mkdir()
    (mine / "scorers.yaml").write_text(catalog, encoding="utf-8")
    for path, text in (files or {}).items():
        (mine / path).parent.mkdir(parents=True, exist_ok=True)
        (mine / path).write_text(text, encoding="utf-8")
    return mine


TAB_CATALOG = "prompts: prompts\nscorers:\n  mine:\n\textends: hallucination\n"
UNCLOSED = {"prompts/mine/analyze.j2": "Judge the claims.\nThe output: {{ output\nThe context follows.\nDecide.\n"}
UNCLOSED_CATALOG = "prompts: prompts\nscorers:\n  mine:\n    extends: hallucination\n    steps:\n      - id: analyze\n        prompt: mine/analyze.j2\n"
OFF_SCALE_CATALOG = "prompts: prompts\nscorers:\n  mine:\n    extends: hallucination\n    threshold: 5\n"


def _problems(workbench: Any) -> list[dict[str, Any]]:
    return list(ok(workbench, "check", {"files": {}})["problems"])


def test_the_checker_s_findings_are_shown_at_their_line_and_open_there(judge: JudgeServer, browser_context: Any, tmp_path: Path) -> None:
    """The checker's own words (a tab in YAML, an unclosed `{{` where it was opened, a threshold
    off the score's scale), at a line of the tuner's file, clickable."""
    mine = _catalog_with(tmp_path, TAB_CATALOG)
    with started(mine, tmp_path / "results.sqlite", data=PAIRS) as workbench:
        [problem] = _problems(workbench)
        assert (problem["path"], problem["line"], problem["severity"]) == ("scorers.yaml", 4, "error")
        tab = Tab(browser_context, workbench).open()
        shown = tab.text("#problems button.problem")
        assert "mine/scorers.yaml:4:" in shown and "YAML does not allow tabs for indentation; use spaces" in shown
        _click_problem(tab, "scorers.yaml")
        assert _caret_line(tab, "pane-a") == 4

        # Fixed with the editor's Tab key: two spaces, and the problem is gone.
        area = tab.page.locator("#pane-a textarea")
        area.fill(area.input_value().replace("\textends", "extends"))
        area.click()
        area.evaluate("area => { const at = area.value.indexOf('extends'); area.setSelectionRange(at, at); }")
        tab.page.keyboard.press("Tab")
        tab.page.keyboard.press("Tab")
        assert "\n    extends: hallucination" in area.input_value()
        tab.page.wait_for_selector("#problems-title:text('Checks: no problems')")

    with started(_catalog_with(tmp_path, UNCLOSED_CATALOG, UNCLOSED, name="other"), tmp_path / "results.sqlite", data=PAIRS) as workbench:
        [problem] = _problems(workbench)
        assert (problem["path"], problem["line"]) == ("prompts/mine/analyze.j2", 2)
        tab = Tab(browser_context, workbench).open()
        _click_problem(tab, "prompts/mine/analyze.j2")
        assert _caret_line(tab, "pane-b") == 2

    with started(_catalog_with(tmp_path, OFF_SCALE_CATALOG, name="third"), tmp_path / "results.sqlite", data=PAIRS) as workbench:
        tab = Tab(browser_context, workbench).open()
        assert "third/scorers.yaml:5:" in tab.text("#problems button.problem") and tab.text("#problems-title") == "Checks: 1 problem"
        _click_problem(tab, "scorers.yaml")
        assert _caret_line(tab, "pane-a") == 5


def test_a_tab_in_yaml_is_named_as_such(judge: JudgeServer, tmp_path: Path) -> None:
    with started(_catalog_with(tmp_path, TAB_CATALOG), tmp_path / "results.sqlite", data=PAIRS) as workbench:
        [problem] = _problems(workbench)
        assert problem["line"] == 4 and "YAML does not allow tabs for indentation; use spaces" in problem["message"]


def test_an_unclosed_brace_is_reported_where_it_was_opened(judge: JudgeServer, tmp_path: Path) -> None:
    with started(_catalog_with(tmp_path, UNCLOSED_CATALOG, UNCLOSED), tmp_path / "results.sqlite", data=PAIRS) as workbench:
        [problem] = _problems(workbench)
        assert (problem["path"], problem["line"]) == ("prompts/mine/analyze.j2", 2)


def test_a_threshold_off_the_score_s_scale_is_refused_as_check_refuses_it(judge: JudgeServer, tmp_path: Path) -> None:
    with started(_catalog_with(tmp_path, OFF_SCALE_CATALOG), tmp_path / "results.sqlite", data=PAIRS) as workbench:
        problems = _problems(workbench)
        assert [(problem["path"], problem["line"], problem["severity"]) for problem in problems] == [("scorers.yaml", 5, "error")]


def test_every_step_is_previewed_before_a_run(judge: JudgeServer, browser_context: Any, tmp_path: Path) -> None:
    script_word_overlap(judge)
    with started(tmp_path / "mine", tmp_path / "results.sqlite", data=PAIRS) as workbench:
        tab = Tab(browser_context, workbench).open()
        page = tab.page
        # Nothing asked yet: the first step's prompt, and an offer to run this item, its cost shown.
        page.wait_for_selector("#prompts section[data-step='preprocess']")
        assert page.locator("#prompts section[data-step='analyze']").count() == 0
        offer = page.locator("#run-item")
        assert re.fullmatch(r"Run this item \(3 judge calls, about \$0\.\d{4}\)", offer.inner_text()), offer.inner_text()
        offer.click()
        page.wait_for_selector("#prompts section[data-step='analyze'] pre.user")
        page.wait_for_selector("#prompts section[data-step='generate_reason'] pre.user")
        assert "from the response cache" in page.locator("#prompts section[data-step='preprocess'] details.answer summary").inner_text()
        assert "Every step's prompt" in tab.text("#preview-note")

        # A new wording of the judging step: its prompt follows, with the first answer still from the cache.
        tab.edit("pane-b", ANALYZE, lambda text: text.replace("Decide,", "Weigh each claim. Decide,"))
        page.wait_for_selector("#prompts section[data-step='analyze'] pre.user:has-text('Weigh each claim.')")
        assert "from the response cache" in page.locator("#prompts section[data-step='preprocess'] details.answer summary").inner_text()

        # A new wording of the first step: its answer is not in the cache, the item's last run has one (said so).
        tab.edit("pane-b", EXTRACT, lambda text: text.replace("Break the text below", "Split the text below"))
        page.wait_for_selector("#prompts section[data-step='preprocess'] pre.user:has-text('Split the text below')")
        summary = page.locator("#prompts section[data-step='preprocess'] details.answer summary").inner_text()
        assert "from run workbench-hallucination-" in summary and "asked with an earlier wording" in summary
        assert page.locator("#prompts section[data-step='analyze'] pre.user").count() == 1

        # A problem in the draft: the preview says it is out of date.
        tab.edit("pane-b", ANALYZE, lambda text: text.replace("Weigh each claim.", "{{ preprocess.clams }}"))
        page.wait_for_selector("#preview-note.stale")
        assert tab.text("#preview-note").startswith("Out of date:") and page.locator("#prompts.stale").count() == 1
        assert tab.errors == []


def test_no_judge_configured_is_said_in_one_clean_line(browser_context: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    assert "OPENAI_API_KEY" not in os.environ
    with started(tmp_path / "mine", tmp_path / "results.sqlite", data=PAIRS) as workbench:
        tab = Tab(browser_context, workbench).open()
        tab.page.click("#tab-run")
        tab.page.wait_for_selector("#estimate:has-text('no judge configured')")
        tab.page.click("#run")
        tab.page.wait_for_selector("#notice:has-text('no judge configured')")
        for text in (tab.text("#notice"), tab.text("#estimate")):
            assert "(base_url=)" not in text and "base_url" not in text, text
            assert text.rstrip(".").endswith("name the model openai/<model>"), text
        assert "Running this item would need a judge: no judge configured" in tab.text("#prompts")

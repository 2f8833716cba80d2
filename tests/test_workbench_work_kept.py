"""Work is never lost in the workbench: every draft is kept on the server as it is typed (per
catalog, surviving a reload and a restart), leaving with unsaved edits asks first, a save over
a newer version is refused with the three texts side by side, Ctrl+S saves through the diff,
and Tab indents only where YAML allows (tabbing through never edits a file). In Chromium."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.scripted import script_word_overlap
from helpers.workbench_pages import PAIRS, ROOT, Tab, browser_context, ok, started, wait_run  # noqa: F401 (fixtures)

from engine.testing import JudgeServer

ANALYZE = "prompts/hallucination/analyze.j2"
BUILT_IN = (ROOT / ANALYZE).read_text(encoding="utf-8")
OTHER_DATA = "examples/begin_faithfulness.jsonl"


@pytest.fixture
def folders(tmp_path: Path, judge: JudgeServer) -> dict[str, Path]:
    script_word_overlap(judge)
    return {"catalog": tmp_path / "mine", "store": tmp_path / "results.sqlite", "drafts": tmp_path / "drafts"}


def _drafts_text(folder: Path) -> str:
    return "".join(path.read_text(encoding="utf-8") for path in folder.glob("*.json"))


def _wait_kept(tab: Tab, folder: Path, text: str) -> None:
    tab.page.wait_for_function("() => true")  # let the page's timers run
    for _ in range(100):
        if text in _drafts_text(folder):
            return
        tab.page.wait_for_timeout(50)
    raise AssertionError(f"{text!r} was not kept in {folder}")


def _wait_dropped(tab: Tab, folder: Path, text: str) -> None:
    """`text` gone from the kept drafts, once the page has kept what it holds now (the draft
    after a save is kept when the check of the saved files is back, later on a busy machine)."""
    for _ in range(200):
        if text not in _drafts_text(folder):
            return
        tab.page.wait_for_timeout(50)
    raise AssertionError(f"{text!r} is still kept in {folder} after 10 s")


@pytest.mark.slow
def test_a_draft_survives_a_reload_and_a_restart_with_its_data_sample_and_seed(folders: dict[str, Path], browser_context: Any, chromium: Any) -> None:
    with started(folders["catalog"], folders["store"], data=PAIRS, drafts=folders["drafts"]) as workbench:
        tab = Tab(browser_context, workbench).open()
        tab.page.select_option("#data", OTHER_DATA)
        tab.page.click("#tab-run")
        tab.page.fill("#size", "7")
        tab.page.fill("#seed", "3")
        tab.edit("pane-b", ANALYZE, lambda text: text.replace("Decide,", "Think twice. Decide,"))
        assert tab.text("#save") == "Save… (1 edited)"
        _wait_kept(tab, folders["drafts"], "Think twice.")
        assert not folders["catalog"].exists()  # kept outside the catalog folder, which a user commits

        dialogs: list[str] = []
        tab.page.on("dialog", lambda dialog: (dialogs.append(dialog.type), dialog.accept()))
        tab.page.reload()
        tab.page.wait_for_function("window.workbenchReady === true")
        assert dialogs == ["beforeunload"]  # leaving with unsaved edits asks first
        tab.page.select_option("#pane-b .file-pick", ANALYZE)
        assert "Think twice. Decide," in tab.page.locator("#pane-b textarea").input_value()
        assert (tab.page.input_value("#data"), tab.page.input_value("#size"), tab.page.input_value("#seed")) == (str(ROOT / OTHER_DATA), "7", "3")
        assert "unsaved edits of 1 file are back" in tab.text("#notice")
        assert tab.errors == []

    # A restart of the workbench, a new browser (no tab to match): the latest draft comes back,
    # on the data set given at this start.
    with started(folders["catalog"], folders["store"], data=PAIRS, drafts=folders["drafts"]) as workbench:
        context = chromium.new_context()
        try:
            tab = Tab(context, workbench).open()
            tab.page.select_option("#pane-b .file-pick", ANALYZE)
            assert "Think twice. Decide," in tab.page.locator("#pane-b textarea").input_value()
            assert (tab.page.input_value("#data"), tab.page.input_value("#size"), tab.page.input_value("#seed")) == (str(PAIRS), "7", "3")
            tab.page.keyboard.press("Control+s")
            tab.page.wait_for_selector("#save-dialog[open]")
            assert "+Think twice. Decide," in tab.text("#diffs")
            tab.page.click("#save-confirm")
            tab.page.wait_for_function("document.querySelector('#save').textContent === 'Save…'")
            assert "Think twice. Decide," in (folders["catalog"] / ANALYZE).read_text(encoding="utf-8")
            _wait_dropped(tab, folders["drafts"], "Think twice.")  # saved: no longer a draft
            closing: list[str] = []
            tab.page.on("dialog", lambda dialog: (closing.append(dialog.type), dialog.accept()))
            tab.page.close(run_before_unload=True)
            assert closing == []  # nothing unsaved: leaving asks nothing
        finally:
            context.close()


def test_a_second_tab_opens_on_the_saved_files_and_takes_the_first_tabs_edits_only_when_asked(folders: dict[str, Path], browser_context: Any) -> None:
    with started(folders["catalog"], folders["store"], data=PAIRS, drafts=folders["drafts"]) as workbench:
        first = Tab(browser_context, workbench).open()
        first.edit("pane-b", ANALYZE, lambda text: text.replace("Decide,", "FIRST TAB. Decide,"))
        _wait_kept(first, folders["drafts"], "FIRST TAB.")

        second = Tab(browser_context, workbench).open()
        second.page.select_option("#pane-b .file-pick", ANALYZE)
        assert "FIRST TAB." not in second.page.locator("#pane-b textarea").input_value()
        assert second.text("#save") == "Save…"  # nothing of the first tab's is this tab's to save
        assert second.page.locator("#other-draft").is_visible() and "Another tab has unsaved edits of 1 file" in second.text("#other-draft")
        second.page.screenshot(path=str(folders["drafts"].parent / "second-tab.png"))
        second.page.wait_for_timeout(400)
        kept = json.loads(_drafts_text(folders["drafts"]))["tabs"]
        assert sum("FIRST TAB." in json.dumps(draft) for draft in kept.values()) == 1  # only the first tab's draft holds it

        second.page.click("#other-draft-open")
        second.page.wait_for_function("document.querySelector('#save').textContent === 'Save… (1 edited)'")
        second.page.select_option("#pane-b .file-pick", ANALYZE)
        assert "FIRST TAB. Decide," in second.page.locator("#pane-b textarea").input_value()
        assert first.errors == [] and second.errors == []


@pytest.mark.slow
def test_a_save_over_a_newer_version_shows_yours_theirs_and_the_base_and_writes_nothing_until_chosen(folders: dict[str, Path], browser_context: Any) -> None:
    with started(folders["catalog"], folders["store"], data=PAIRS, drafts=folders["drafts"]) as workbench:
        first = Tab(browser_context, workbench).open().sample(2)
        second = Tab(browser_context, workbench).open().sample(2)
        first.edit("pane-b", ANALYZE, lambda text: text.replace("Decide,", "FIRST TAB. Decide,"))
        second.edit("pane-b", ANALYZE, lambda text: text.replace("Decide,", "SECOND TAB. Decide,"))
        first.page.keyboard.press("Control+s")
        first.page.click("#save-confirm")
        saved = folders["catalog"] / ANALYZE
        first.page.wait_for_function("document.querySelector('#save').textContent === 'Save…'")
        assert "FIRST TAB." in saved.read_text(encoding="utf-8")
        wait_run(workbench)  # the version is recorded (a save waits for a run going on)

        # The second tab, edited from the built-in text, saves: refused, the three texts shown.
        second.page.keyboard.press("Control+s")
        second.page.click("#save-confirm")
        dialog = second.page.locator("#conflict-dialog[open]")
        dialog.wait_for()
        section = dialog.locator(f"section.conflict[data-path='{ANALYZE}']")
        assert "+SECOND TAB. Decide," in section.locator(".yours").inner_text()
        assert "+FIRST TAB. Decide," in section.locator(".theirs").inner_text()
        base = section.locator(".base").inner_text()
        assert "the built-in text you began from" in base and "Decide, for each claim" in base and "TAB." not in base
        assert "FIRST TAB." in saved.read_text(encoding="utf-8")  # nothing written yet
        second.page.click("#conflict-cancel")
        assert "FIRST TAB." in saved.read_text(encoding="utf-8") and "Nothing was written" in second.text("#notice")

        second.page.keyboard.press("Control+s")
        second.page.click("#save-confirm")
        dialog.wait_for()
        second.page.click("#conflict-mine")
        second.page.wait_for_function("document.querySelector('#save').textContent === 'Save…'")
        assert "SECOND TAB." in saved.read_text(encoding="utf-8") and "FIRST TAB." not in saved.read_text(encoding="utf-8")
        wait_run(workbench)

        # The first tab, not edited since, is told and shows the saved text; an edit there
        # followed by "take theirs" drops it.
        first.edit("pane-b", ANALYZE, lambda text: text.replace("FIRST TAB.", "FIRST AGAIN."))
        first.page.wait_for_selector("#notice:has-text('saved elsewhere since you began editing')")
        first.page.keyboard.press("Control+s")
        first.page.click("#save-confirm")
        first.page.locator("#conflict-dialog[open]").wait_for()
        first.page.click("#conflict-theirs")
        first.page.wait_for_function("document.querySelector('#save').textContent === 'Save…'")
        assert "SECOND TAB." in first.page.locator("#pane-b textarea").input_value()
        assert "SECOND TAB." in saved.read_text(encoding="utf-8")
        assert first.errors == [] and second.errors == []


@pytest.mark.slow
def test_a_file_saved_elsewhere_and_not_edited_here_is_shown_as_saved(folders: dict[str, Path], browser_context: Any) -> None:
    with started(folders["catalog"], folders["store"], data=PAIRS, drafts=folders["drafts"]) as workbench:
        stale = Tab(browser_context, workbench).open()
        writer = Tab(browser_context, workbench).open().sample(2)
        writer.edit("pane-b", ANALYZE, lambda text: text.replace("Decide,", "WRITTEN ELSEWHERE. Decide,"))
        writer.page.keyboard.press("Control+s")
        writer.page.click("#save-confirm")
        writer.page.wait_for_function("document.querySelector('#save').textContent === 'Save…'")
        # The stale tab checks on its next edit (of another file): the saved text replaces its copy.
        stale.edit("pane-a", "scorers.yaml", lambda text: text + "# a note\n")
        stale.page.wait_for_selector("#notice:has-text('was saved elsewhere')")
        stale.page.select_option("#pane-b .file-pick", ANALYZE)
        assert "WRITTEN ELSEWHERE." in stale.page.locator("#pane-b textarea").input_value()
        assert stale.text("#save") == "Save… (1 edited)"


def test_ctrl_s_and_cmd_s_open_the_diff_and_write_nothing_until_confirmed(folders: dict[str, Path], browser_context: Any) -> None:
    with started(folders["catalog"], folders["store"], data=PAIRS, drafts=folders["drafts"]) as workbench:
        tab = Tab(browser_context, workbench).open().sample(2)
        tab.edit("pane-b", ANALYZE, lambda text: text.replace("Decide,", "Saved by keys. Decide,"))
        for keys in ("Control+s", "Meta+s"):
            tab.page.locator("#pane-b textarea").focus()
            tab.page.keyboard.press(keys)
            tab.page.wait_for_selector("#save-dialog[open]")
            assert "+Saved by keys. Decide," in tab.text("#diffs")
            assert not folders["catalog"].exists()
            tab.page.click("#save-cancel")
        tab.page.keyboard.press("Control+s")
        tab.page.click("#save-confirm")
        tab.page.wait_for_function("document.querySelector('#save').textContent === 'Save…'")
        assert "Saved by keys." in (folders["catalog"] / ANALYZE).read_text(encoding="utf-8")
        assert tab.errors == []


def test_tab_indents_only_where_yaml_allows_and_tabbing_through_edits_nothing(folders: dict[str, Path], browser_context: Any) -> None:
    folders["catalog"].mkdir()
    (folders["catalog"] / "scorers.yaml").write_text("prompts: prompts\nscorers:\n  mine:\n    extends: hallucination\n", encoding="utf-8")
    with started(folders["catalog"], folders["store"], data=PAIRS, drafts=folders["drafts"]) as workbench:
        tab = Tab(browser_context, workbench).open()
        page = tab.page
        # Tabbing through the page: into the editor, and out again; no file is edited.
        page.focus("#pane-a .file-pick")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Editor: scorers.yaml"
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "File in the bottom editor"
        assert tab.text("#save") == "Save…"
        area = page.locator("#pane-a textarea")
        saved = area.input_value()

        def caret_at(line: int, column: int = 0) -> None:
            offset = sum(len(text) + 1 for text in saved.split("\n")[: line - 1]) + column
            area.click()  # as a person puts the caret there
            area.evaluate(f"area => area.setSelectionRange({offset}, {offset})")

        caret_at(2, 0)  # `scorers:` after a top-level key that opens nothing: no deeper indentation
        page.keyboard.press("Tab")
        assert area.input_value() == saved and tab.text("#save") == "Save…"
        caret_at(4, 1)  # in the indentation of `extends:`, already as deep as `mine:` opens
        page.keyboard.press("Tab")
        assert area.input_value() == saved
        caret_at(3, 4)  # in the middle of a key: never
        page.keyboard.press("Tab")
        assert area.input_value() == saved and tab.text("#save") == "Save…"

        # A new key below `extends: hallucination`: indented as deep as its siblings, no deeper.
        caret_at(5, 0)
        page.keyboard.type("threshold: 0.3")
        caret_at(5, 0)
        page.keyboard.press("Tab")
        page.keyboard.press("Tab")
        assert area.input_value().endswith("    extends: hallucination\n    threshold: 0.3")
        page.keyboard.press("Tab")  # a level deeper would not be YAML: the focus moves on instead
        assert area.input_value().endswith("\n    threshold: 0.3")
        assert page.evaluate("document.activeElement.getAttribute('aria-label')") != "Editor: scorers.yaml"
        caret_at(5, 4)
        page.keyboard.press("Shift+Tab")
        assert area.input_value().endswith("\n  threshold: 0.3")
        assert tab.text("#save") == "Save… (1 edited)" and "\t" not in area.input_value()


def test_a_save_over_a_newer_version_writes_nothing(tmp_path: Path) -> None:
    """The refusal itself, without a browser: what the page's three-way view is made of."""
    from engine.workbench.workspace import NEW_CATALOG, SaveConflict, Workspace

    workspace = Workspace(tmp_path / "mine", shown_relative_to=tmp_path)
    try:
        workspace.save({ANALYZE: "theirs\n"}, {ANALYZE: None})
        with pytest.raises(SaveConflict) as refused:
            workspace.save({ANALYZE: "mine\n", "scorers.yaml": NEW_CATALOG + "# mine\n"}, {ANALYZE: None, "scorers.yaml": NEW_CATALOG})
        [conflict] = refused.value.conflicts
        shown = conflict.as_json()
        assert (shown["yours"], shown["theirs"], shown["base"], shown["began_from"]) == ("mine\n", "theirs\n", None, BUILT_IN)
        assert "+theirs" in shown["theirs_diff"] and "+mine" in shown["yours_diff"]
        assert (tmp_path / "mine" / ANALYZE).read_text(encoding="utf-8") == "theirs\n"
        assert "# mine" not in (tmp_path / "mine" / "scorers.yaml").read_text(encoding="utf-8")  # nothing of that save written
        assert workspace.save({ANALYZE: "mine\n"}, {ANALYZE: "theirs\n"}) == {ANALYZE: "mine\n"}  # knowingly over theirs
    finally:
        workspace.close()

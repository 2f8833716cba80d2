"""A newcomer following docs/workbench.md reaches a saved, measured change: the steps of "Your
first measured change" are read from the page of the docs and walked in Chromium, with the
names the docs give (each control named in bold is found by that name) and the words they say
to type; at the end the template is saved in the catalog folder and its version is measured."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from helpers.scripted import script_word_overlap
from helpers.workbench_pages import PAIRS, ROOT, Tab, browser_context, started  # noqa: F401 (fixtures)

from engine.testing import JudgeServer

DOC = ROOT / "docs" / "workbench.md"


def _steps() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Your first measured change", 1)[1].split("\n## ", 1)[0]
    return [" ".join(step.split()) for step in re.split(r"\n(?=\d+\. )", section.strip()) if re.match(r"\d+\. ", step)]


def _bold(step: str) -> list[str]:
    return re.findall(r"\*\*(.+?)\*\*", step)


def _code(step: str) -> list[str]:
    return re.findall(r"`([^`]+)`", step)


def test_the_first_measured_change_of_the_docs(judge: JudgeServer, browser_context: Any, tmp_path: Path) -> None:
    script_word_overlap(judge)
    steps = _steps()
    assert [int(step.split(".", 1)[0]) for step in steps] == list(range(1, 11)), steps
    with started(tmp_path / "my-catalog", tmp_path / "results.sqlite", data=PAIRS) as workbench:
        # 1. Open the address it prints.
        tab = Tab(browser_context, workbench).open()
        page = tab.page
        # 2. The scorer and the data set, by the names the docs give.
        scorer, data = _bold(steps[1])
        page.select_option("#scorer", scorer)
        assert page.locator("#data option:checked").inner_text() == data
        # 3. The template, in the lower editor.
        [template] = _bold(steps[2])
        page.select_option("#pane-b .file-pick", template)
        # 4. The words to write, before the words the docs name; the checks say so.
        words, before = _code(steps[3])
        [no_problems] = _bold(steps[3])
        area = page.locator("#pane-b textarea")
        assert before in area.input_value()
        area.fill(area.input_value().replace(before, f"{words} {before}", 1))
        page.wait_for_selector(f"#problems-title:text('{no_problems}')")
        # 5. The preview shows the words; "Run this item" gets the next step's answer, its cost shown.
        preview, run_item = _bold(steps[4])
        page.get_by_role("tab", name=preview).click()
        page.wait_for_selector("#prompts section[data-step='preprocess']")
        offer = page.get_by_role("button", name=re.compile(re.escape(run_item)))
        assert "$" in offer.inner_text()
        offer.click()
        page.wait_for_selector(f"#prompts section[data-step='analyze'] pre.user:has-text('{words}')")
        # 6. Run 20 items.
        run_tab, items, run_button = _bold(steps[5])
        size = re.search(r"to (\d+)", steps[5]).group(1)  # type: ignore[union-attr]
        page.get_by_role("tab", name=run_tab).click()
        page.get_by_label(items).fill(size)
        page.get_by_label(items).dispatch_event("change")
        page.wait_for_selector(f"#estimate:has-text('{size} items')")
        page.get_by_role("button", name=run_button, exact=True).click()
        # 7. Results: the agreement, on how many items.
        [results] = _bold(steps[6])
        page.wait_for_selector("#view-results:not([hidden]) #agreement tr[data-figure='f1']")
        assert page.get_by_role("tab", name=results).get_attribute("aria-selected") == "true"
        assert tab.text("#agreement-coverage").startswith(f"On {size} of {size} items")
        # 8. Ctrl+S: the diff.
        page.keyboard.press(_bold(steps[7])[0].replace("Ctrl", "Control"))
        page.wait_for_selector("#save-dialog[open]")
        assert f"+{words} {before}" in tab.text("#diffs")
        # 9. Write and record.
        [confirm] = _bold(steps[8])
        page.get_by_role("button", name=confirm).click()
        [written] = [path for path in _code(steps[8]) if path.startswith("my-catalog/")]
        saved = tmp_path / written
        page.wait_for_function("document.querySelector('#save').textContent === 'Save…'")
        assert f"{words} {before}" in saved.read_text(encoding="utf-8")
        # 10. Versions: v1 with its figures, on the items it scored.
        versions, first = _bold(steps[9])[:2]
        page.get_by_role("tab", name=versions).click()
        row = page.locator(f"#versions tr[data-version='{first.removeprefix('v')}']")
        row.wait_for()
        cells = row.locator("td")
        assert cells.nth(1).inner_text() == f"{size} of {size} items scored"
        assert re.match(r"\d", cells.nth(2).inner_text()) and re.match(r"-?\d", cells.nth(3).inner_text())
        assert tab.errors == []

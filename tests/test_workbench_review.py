"""Reviewing in the workbench, end to end in Chromium: a queue made on the page from a stored
run, two reviewers labelling it by keyboard (blind: the judge's score appears only once the
label is given; the judge's claims highlighted in the output; an item held by one reviewer is
never offered to the other), a disagreement settled, people's agreement shown beside the
judge's, and the golden set exported and read by `scorers calibrate`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.scripted import script_hallucination
from typer.testing import CliRunner
from helpers.workbench_pages import Tab, call, started

from engine.cli import app
from engine.judge import JudgeSettings
from engine.store import open_store
from engine.testing import JudgeServer
from engine.workbench.server import Workbench

runner = CliRunner()

CATALOG = """\
scorers: {}
queues:
  claims-review:
    scorer: hallucination
    instructions: Flag the answer when the context does not support everything it says.
    steps:
      answers: analyze.verdicts
      text: statement
      judged: verdict
      choices: ['yes', 'no']
    labels_per_item: 2
"""


def write_items(path: Path, count: int = 6) -> Path:
    rows = []
    for n in range(count):
        output = f"Fact {n} holds" if n % 2 == 0 else f"Fact {n} holds. The moon is WRONG cheese"
        rows.append({"id": f"item-{n}", "input": f"Is fact {n} true?", "output": output, "context": [f"Fact {n} holds."]})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def review_workbench(judge: JudgeServer, tmp_path: Path) -> Iterator[Workbench]:
    script_hallucination(judge)
    store = tmp_path / "results.sqlite"
    data = write_items(tmp_path / "production.jsonl")
    evaluated = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--run", "production", "--store", str(store), "--model", "openai/judge"])
    assert evaluated.exit_code == 0, evaluated.stderr
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "scorers.yaml").write_text(CATALOG, encoding="utf-8")
    with started(folder, store, judge=JudgeSettings(model="openai/judge")) as workbench:
        yield workbench


def open_review(chromium: Any, workbench: Workbench, name: str) -> Tab: 
    tab = Tab(chromium.new_context(), workbench)
    tab.page.goto(f"http://127.0.0.1:{workbench.port}/review?token={workbench.token}")
    tab.page.wait_for_function("window.reviewReady === true")
    tab.page.fill("#name", name)
    tab.page.click("text=Start reviewing")
    tab.page.wait_for_function("window.reviewReady === true")
    return tab


def pick_queue(tab: Tab, name: str) -> None:
    tab.page.select_option("#queue", name)
    tab.page.wait_for_function("window.reviewReady === true")


def current_item(tab: Tab) -> str:
    tab.page.wait_for_selector("#reviewing:not([hidden])")
    return tab.text("#item-title").split()[1]


def advance(tab: Tab) -> None:
    """Go to the next item (→) and wait until it is shown, or the queue says nothing is left."""
    before = tab.text("#item-title")
    tab.page.keyboard.press("ArrowRight")
    tab.page.wait_for_function(
        "([before]) => !document.querySelector('#empty').hidden || document.querySelector('#item-title').textContent !== before", arg=[before]
    )


def label(tab: Tab, key: str) -> None:
    """Give the current item a label by keyboard, as a reviewer does, and wait for the judge's view."""
    assert tab.page.locator("#judge-box").is_hidden(), "a blind queue shows the judge before the label"
    assert "Score" not in tab.text("#label-box")
    tab.page.keyboard.press(key)
    tab.page.keyboard.press("Enter")
    tab.page.wait_for_selector("#judge-box:not([hidden])")
    assert tab.text("#judge-line").startswith("Score ")


@pytest.mark.slow
def test_two_reviewers_label_a_queue_settle_a_disagreement_and_calibrate_on_it(chromium: Any, review_workbench: Workbench, tmp_path: Path) -> None: 
    workbench = review_workbench
    ana = open_review(chromium, workbench, "Ana")
    page = ana.page
    page.click("#tab-new")
    page.fill("#new-name", "claims-review")
    page.select_option("#new-run", "production")
    page.select_option("#new-scorer", "hallucination")
    page.click("text=Make the queue")
    page.wait_for_function("document.querySelector('#progress-line').textContent.includes('6 items of run production')")

    first = current_item(ana)
    assert first == "item-0"
    # While Ana holds item-0, Ben is offered another item.
    ben = open_review(chromium, workbench, "Ben")
    assert current_item(ben) == "item-1"

    # The judge's claims are found in the output and can be labelled one by one.
    ben.page.wait_for_selector("mark.claim")
    assert [mark.inner_text() for mark in ben.page.locator("mark.claim").all()] == ["Fact 1 holds1", "The moon is WRONG cheese2"]
    assert ben.page.locator("#answers li").count() == 2
    ben.page.keyboard.press("Shift+Digit1")  # claim 1: 'yes', made up (the judge will say no)
    ben.page.keyboard.press("Shift+Digit1")  # claim 2: 'yes'
    label(ben, "f")
    assert ben.text("#answers li:nth-child(1) .judged") == "judge: no (you differ)"
    assert ben.text("#answers li:nth-child(2) .judged") == "judge: yes"

    for _ in range(6):
        item = current_item(ana)
        number = int(item.split("-")[1])
        label(ana, "f" if number % 2 else "p")
        advance(ana)
        if not page.locator("#empty").is_hidden():
            break
    assert "Nothing left for you in this queue" in ana.text("#empty")

    advance(ben)
    for _ in range(6):
        if not ben.page.locator("#empty").is_hidden():
            break
        item = current_item(ben)
        number = int(item.split("-")[1])
        # Ben flags item-0, which Ana passed: a disagreement.
        label(ben, "f" if number % 2 or number == 0 else "p")
        advance(ben)
    ben.page.wait_for_selector("#empty:not([hidden])")

    # Going back shows Ben's own label and the judge's view again.
    ben.page.keyboard.press("ArrowLeft")
    ben.page.wait_for_selector("#reviewing:not([hidden]) #judge-box:not([hidden])")
    assert ben.text("#item-title") == "Item item-5 (labelled before)"
    assert ben.page.locator("#label-choices button.chosen").inner_text().startswith("Flag")

    page.click("#tab-agreement")
    page.wait_for_selector("#people tbody tr")
    assert "Cohen's kappa" in ana.text("#people")
    assert "Ana: pass; Ben: flag" in ana.text("#disagreements")
    assert "cannot be expected to agree with people better than people agree with each other" in ana.text("#ceiling")
    # The settler sees what the reviewers saw: the question, the answer and its context.
    row = page.locator("#disagreements tr[data-item='item-0']")
    assert "Input: Is fact 0 true?" in row.inner_text() and "Output: Fact 0 holds" in row.inner_text()
    assert "Fact 0 holds." in row.locator(".settle-context").inner_text()
    page.locator("#view-agreement").screenshot(path=str(tmp_path / "settle.png"))
    page.click("button[aria-label='settle item-0 as Pass']")
    page.wait_for_selector("#disagreements-empty:not([hidden])")
    assert "settled as pass by Ana" in ana.text("#notice")
    # ... and a way back: the item settled last can be settled again.
    page.click("#settle-again")
    page.click("button[aria-label='settle item-0 as Flag']")
    page.wait_for_selector("#settled-last-text:has-text('settled as flag by Ana')")
    page.click("#settle-again")
    page.click("button[aria-label='settle item-0 as Pass']")
    page.wait_for_selector("#settled-last-text:has-text('settled as pass by Ana')")
    assert "accuracy" in ana.text("#judge-figures")
    assert "On 2 claims people answered, the judge said what they said on 1" in ana.text("#answers-line")
    assert ana.text("#wrong-answers tbody") == "item-1\t1. Fact 1 holds\tno\tyes"
    assert not ana.errors and not ben.errors

    golden = tmp_path / "golden.jsonl"
    exported = runner.invoke(app, ["queue", "export", "claims-review", "-o", str(golden), "--store", str(tmp_path / "results.sqlite")])
    assert exported.exit_code == 0 and "Wrote 6 labelled item(s)" in exported.stdout, exported.stderr
    rows = {row["id"]: row for row in map(json.loads, golden.read_text(encoding="utf-8").splitlines())}
    assert rows["item-0"]["expected"] == {"hallucination": False}
    assert rows["item-0"]["metadata"]["labels"]["settled_by"] == "Ana"
    assert rows["item-1"]["metadata"]["labels"]["answers"] == ["yes", "yes"]  # Ben's claim by claim; Ana gave none
    calibrated = runner.invoke(app, ["calibrate", str(golden), "--scorer", "hallucination", "--model", "openai/judge", "--store", str(tmp_path / "results.sqlite")])
    assert calibrated.exit_code == 0, calibrated.stderr
    assert "Best threshold by f1" in calibrated.stdout


def test_the_runs_offered_for_a_queue_put_the_users_own_first(review_workbench: Workbench, tmp_path: Path) -> None:
    labelled = tmp_path / "labelled.jsonl"
    labelled.write_text("".join(json.dumps({"id": f"l{n}", "output": "Fact holds", "context": ["Fact holds."], "expected": False}) + "\n" for n in range(3)), encoding="utf-8")
    calibrated = runner.invoke(app, ["calibrate", str(labelled), "--scorer", "hallucination", "--store", str(tmp_path / "results.sqlite"), "--model", "openai/judge"])
    assert calibrated.exit_code == 0, calibrated.output
    status, state = call(review_workbench, "review/state", {})
    assert status == 200
    names = [run["name"] for run in state["runs"]]
    assert names[0] == "production" and len(names) == 2 and names[1].startswith("labelled-calibrate-")


def test_the_review_api_refuses_a_label_the_queue_does_not_ask_for(review_workbench: Workbench) -> None:
    status, created = call(review_workbench, "review/create", {"name": "plain", "run": "production", "scorer": "hallucination"})
    assert status == 200 and created["items"] == 6
    status, found = call(review_workbench, "review/next", {"queue": "plain", "reviewer": "Ana"})
    assert status == 200 and found["item"]["judged"] is None  # blind
    status, refused = call(review_workbench, "review/label", {"queue": "plain", "reviewer": "Ana", "item_id": found["item"]["item_id"], "value": "maybe"})
    assert status == 400 and refused["error"] == "label: this queue asks for pass or flag, got 'maybe'"
    status, refused = call(review_workbench, "review/next", {"queue": "plain", "reviewer": " "})
    assert status == 400 and "give your name" in refused["error"]


def test_a_queue_is_a_data_set_of_the_workbench_once_labelled(review_workbench: Workbench) -> None:
    call(review_workbench, "review/create", {"name": "golden", "run": "production", "scorer": "hallucination", "sample": 4})
    for _ in range(4):
        found = call(review_workbench, "review/next", {"queue": "golden", "reviewer": "Ana"})[1]["item"]
        call(review_workbench, "review/label", {"queue": "golden", "reviewer": "Ana", "item_id": found["item_id"], "value": "flag"})
    status, state = call(review_workbench, "state", {})
    assert status == 200 and {"path": "queue:golden", "name": "queue golden (4 labelled)"} in state["datasets"]
    status, items = call(review_workbench, "items", {"data": "queue:golden", "scorer": "hallucination"})
    assert status == 200 and items["total"] == 4 and {item["label"] for item in items["items"]} == {True}


def test_a_mistake_in_a_queue_declaration_is_shown_by_the_workbenchs_check(review_workbench: Workbench) -> None:
    broken = CATALOG.replace("labels_per_item: 2", "labels_per_item: 0")
    status, found = call(review_workbench, "check", {"scorer": "hallucination", "files": {"scorers.yaml": broken}})
    assert status == 200
    [problem] = found["problems"]
    assert problem["line"] == 11 and "queues.claims-review.labels_per_item" in problem["message"] and "greater than or equal to 1" in problem["message"]


@pytest.mark.slow
def test_a_conversation_is_shown_with_its_tool_calls(chromium: Any, review_workbench: Workbench, tmp_path: Path) -> None: 
    transcript = [
        {"role": "user", "content": "Book me a table in Paris."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "book", "arguments": '{"place": "Chez Paul"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Booked a table at Chez Paul."},
        {"role": "assistant", "content": "Booked a table at Chez Paul."},
    ]
    data = tmp_path / "agent.jsonl"
    data.write_text(json.dumps({"id": "chat-1", "input": "Book me a table in Paris.", "turns": transcript, "context": ["Chez Paul is in Paris."]}) + "\n", encoding="utf-8")
    made = runner.invoke(app, ["queue", "create", "agent", "--from-file", str(data), "--scorer", "hallucination", "--store", str(tmp_path / "results.sqlite")])
    assert made.exit_code == 0, made.stderr
    tab = open_review(chromium, review_workbench, "Ana")
    pick_queue(tab, "agent")
    tab.page.wait_for_selector(".field-turns li.turn")
    assert tab.page.locator(".field-turns li.turn").count() == 4
    assert 'book({"place":"Chez Paul"})' in tab.text(".field-tool_calls")
    assert tab.text(".field-output pre") == "Booked a table at Chez Paul."
    assert tab.page.locator("#judge-box").is_hidden() and not tab.errors
    assert tab.page.locator("#hidden-judge").is_hidden()  # a queue from a file has no judge's view to hide


@pytest.mark.slow
def test_categories_and_numbers_are_given_by_keyboard(chromium: Any, review_workbench: Workbench, tmp_path: Path) -> None: 
    catalog = tmp_path / "mine" / "scorers.yaml"
    catalog.write_text(
        CATALOG + "  kinds:\n    scorer: hallucination\n    label:\n      kind: category\n      categories: [fine, invented, off topic]\n      flag: [invented]\n"
        "  numbers:\n    scorer: hallucination\n    label:\n      kind: score\n",
        encoding="utf-8",
    )
    for name in ("kinds", "numbers"):
        assert call(review_workbench, "review/create", {"name": name, "run": "production", "sample": 2})[0] == 200
    tab = open_review(chromium, review_workbench, "Ana")
    pick_queue(tab, "kinds")
    current_item(tab)
    assert [button.inner_text() for button in tab.page.locator("#label-choices button").all()] == ["fine 1", "invented 2", "off topic 3"]
    label(tab, "3")
    assert tab.page.locator("#label-choices button.chosen").inner_text() == "off topic 3"
    pick_queue(tab, "numbers")
    tab.page.wait_for_selector("#score")
    tab.page.keyboard.press("v")
    tab.page.keyboard.type("0.7")
    tab.page.keyboard.press("Enter")
    tab.page.wait_for_selector("#judge-box:not([hidden])")
    labels = {queue: [label.value for label in open_store(tmp_path / "results.sqlite").labels(queue)] for queue in ("kinds", "numbers")}  # type: ignore[union-attr]
    assert labels == {"kinds": ["off topic"], "numbers": [0.7]}
    assert not tab.errors


@pytest.mark.slow
def test_an_item_someone_else_holds_is_said_so_and_comes_back_when_they_are_done(chromium: Any, review_workbench: Workbench) -> None: 
    """Not "nothing left": the last item that still needs Ben's label is Ana's for now, and he
    gets it once she has labelled it."""
    assert call(review_workbench, "review/create", {"name": "last-one", "run": "production", "scorer": "hallucination", "sample": 1, "labels_per_item": 2})[0] == 200
    ana = open_review(chromium, review_workbench, "Ana")
    pick_queue(ana, "last-one")
    held = current_item(ana)

    ben = open_review(chromium, review_workbench, "Ben")
    pick_queue(ben, "last-one")
    ben.page.wait_for_selector("#empty:not([hidden])")
    assert ben.text("#empty").startswith("1 item still needs your label, but someone else is labelling it right now.")
    assert ben.page.locator("#label-box").is_hidden() and ben.page.locator("#save-label").is_hidden()  # no form to label nothing with

    label(ana, "p")
    ben.page.keyboard.press("ArrowRight")
    assert current_item(ben) == held

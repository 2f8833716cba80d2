"""The workbench as a tuner uses it: a local page, reachable only with its token, that edits a
scorer (checked as typed), previews its prompts, runs it on labelled items against the
scripted judge, compares the run with the one before, and saves into the catalog folder only."""

from __future__ import annotations

import json
import os
import shutil
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from helpers.workbench_pages import PAIRS, ROOT, fetch, workbench  # noqa: F401 (the fixture)
from typer.testing import CliRunner

from engine.catalog import builtin_catalog_path
from engine.cli import app
from engine.store import open_store
from engine.testing import JudgeServer
from engine.workbench.datasets import read_items, stratified_sample
from engine.workbench.server import Workbench

ARTIFACTS = Path(os.environ.get("SCORERS_TEST_ARTIFACTS", ROOT / "test-artifacts"))
runner = CliRunner()


def _request(workbench: Workbench, path: str, body: dict[str, Any] | None = None, token: str | None = "cookie", host: str | None = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if token == "cookie":
        headers["Cookie"] = f"scorers_workbench={workbench.token}"
        headers["X-Workbench-Session"] = workbench.session_key
    if host is not None:
        headers["Host"] = host
    return fetch(workbench, path, json.dumps(body).encode() if body is not None else None, headers)


def test_every_request_needs_the_token(workbench: Workbench) -> None:
    assert _request(workbench, "/", token=None)[0] == 403
    assert _request(workbench, "/api/state", {}, token=None)[0] == 403
    assert _request(workbench, f"/?token={workbench.token}x", token=None)[0] == 403
    assert _request(workbench, "/static/workbench.js", token=None)[0] == 403
    # A page of another site that resolves its own name to 127.0.0.1 names its host: refused.
    assert _request(workbench, "/api/state", {}, host="attacker.example:80")[0] == 403

    status, page = _request(workbench, f"/?token={workbench.token}", token=None)
    assert status == 200 and "Scorers workbench" in page
    status, state = _request(workbench, "/api/state", {})
    assert status == 200 and any(scorer["id"] == "hallucination" for scorer in state["scorers"])
    assert state["datasets"][0]["path"] == str(PAIRS)


def test_the_token_link_sets_a_cookie_for_the_page(workbench: Workbench) -> None:
    with urllib.request.urlopen(workbench.url) as response:
        cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"scorers_workbench={workbench.token};") and "HttpOnly" in cookie and "SameSite=Strict" in cookie


def test_writes_outside_the_catalog_folder_are_refused(workbench: Workbench, tmp_path: Path) -> None:
    body = {"scorer": "hallucination", "data": str(PAIRS), "size": 4, "seed": 0}
    for path in ("../outside.j2", "/tmp/outside.yaml", "prompts/../../outside.j2", "prompts/run.py"):
        status, answer = _request(workbench, "/api/save", {**body, "files": {path: "x"}})
        assert status == 403, path
        assert "writes only" in answer["error"] and "inside the catalog folder" in answer["error"]
    assert not (tmp_path / "outside.j2").exists()
    assert not (tmp_path / "mine").exists()  # nothing was written, not even the catalog file


@pytest.mark.slow
def test_an_edit_of_a_built_in_template_is_saved_in_the_catalog_folder(workbench: Workbench, tmp_path: Path) -> None:
    builtin = ROOT / "prompts" / "hallucination" / "analyze.j2"
    before = builtin.read_text(encoding="utf-8")
    edited = before.replace("Decide,", "When you hesitate, say yes. Decide,")
    body = {"scorer": "hallucination", "data": str(PAIRS), "size": 4, "seed": 0, "files": {"prompts/hallucination/analyze.j2": edited}, "bases": {"prompts/hallucination/analyze.j2": None}}
    status, diff = _request(workbench, "/api/diff", body)
    assert status == 200 and [change["path"] for change in diff["changes"]] == ["scorers.yaml", "prompts/hallucination/analyze.j2"]
    assert "+When you hesitate, say yes. Decide," in diff["changes"][1]["diff"]
    status, saved = _request(workbench, "/api/save", body)
    assert status == 200, saved
    assert (tmp_path / "mine" / "prompts" / "hallucination" / "analyze.j2").read_text(encoding="utf-8") == edited
    assert builtin.read_text(encoding="utf-8") == before


def test_the_built_in_catalog_is_not_a_catalog_to_edit(tmp_path: Path) -> None:
    # The installed package's catalog: the checkout's own folder only when installed editable.
    refused = runner.invoke(app, ["workbench", str(builtin_catalog_path().parent), "--no-browser", "--store", str(tmp_path / "r.sqlite")])
    assert refused.exit_code == 2
    assert "the built-in catalog of the installed package; give a folder of your own" in refused.stderr


def test_without_the_extra_the_command_says_which_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    missing = runner.invoke(app, ["workbench", str(tmp_path), "--no-browser", "--store", str(tmp_path / "r.sqlite")])
    assert missing.exit_code == 2
    assert missing.stderr.strip() == 'error: the workbench needs the `workbench` extra: pip install "llm-scorers[workbench]"'


def test_a_sample_keeps_each_label_in_its_share_and_its_seed() -> None:
    items = read_items(PAIRS)
    sample = stratified_sample(items, "hallucination", 20, seed=3)
    labels = [item.label_for("hallucination") for item in sample]
    assert len(sample) == 20 and labels.count(True) == 10 and labels.count(False) == 10
    assert [item.item_id for item in sample] == [item.item_id for item in stratified_sample(items, "hallucination", 20, seed=3)]
    assert [item.item_id for item in sample] != [item.item_id for item in stratified_sample(items, "hallucination", 20, seed=4)]
    assert [item.line for item in sample] == sorted(item.line for item in sample)


def test_a_saved_version_is_a_stored_run_listed_by_scorers_results(workbench: Workbench, tmp_path: Path) -> None:
    body = {"scorer": "hallucination", "data": str(PAIRS), "size": 6, "seed": 1, "files": {}}
    status, saved = _request(workbench, "/api/save", body)
    assert status == 200 and saved["version"] == 1 and saved["run"]["run"] == "workbench-hallucination-v1"
    _wait(workbench)
    status, versions = _request(workbench, "/api/versions", {"scorer": "hallucination"})
    assert [version["version"] for version in versions["versions"]] == [1]
    assert versions["versions"][0]["items"] == 6 and versions["versions"][0]["f1"] is not None
    store = open_store(tmp_path / "results.sqlite")
    assert store is not None
    run = store.get_run("workbench-hallucination-v1")
    assert run is not None and run.meta["workbench"]["sample"] == {"data": str(PAIRS), "size": 6, "seed": 1, "items": 6}
    listed = runner.invoke(app, ["results", "--store", str(tmp_path / "results.sqlite"), "--json"])
    assert "workbench-hallucination-v1" in [run["name"] for run in json.loads(listed.stdout)]


def _wait(workbench: Workbench) -> dict[str, Any]:
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = _request(workbench, "/api/status", {})[1]["run"]
        if status["status"] != "running":
            return status  # type: ignore[no-any-return]
        time.sleep(0.1)
    raise AssertionError("the run did not end")




def _edit(page: Any, pane: str, path: str, change: Any) -> None:
    """Pick `path` in an editor pane and replace its text by `change(text)`, as typing does."""
    page.select_option(f"#{pane} .file-pick", path)
    area = page.locator(f"#{pane} textarea")
    area.fill(change(area.input_value()))


@pytest.mark.slow
def test_the_tuning_loop_in_a_browser(workbench: Workbench, chromium: Any, tmp_path: Path) -> None:
    page = chromium.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(90_000)  # runs of 20 items on a busy CI machine
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(f"http://127.0.0.1:{workbench.port}/") else route.abort())
    page.goto(workbench.url)

    # Pick: the built-in hallucination scorer and the shipped labelled pairs.
    page.select_option("#scorer", "hallucination")
    page.select_option("#data", str(PAIRS))
    page.wait_for_selector("#prompts section[data-step='preprocess']")
    assert page.locator("#problems-title").inner_text() == "Checks: no problems"

    # Keyboard: Tab reaches the controls; in an editor Tab indents, Escape then Tab moves on;
    # the arrow keys switch the views.
    page.focus("#pane-a .file-pick")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Editor: scorers.yaml"
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "File in the bottom editor"
    page.focus("#tab-preview")
    page.keyboard.press("ArrowRight")
    assert page.locator("#tab-run").get_attribute("aria-selected") == "true" and page.locator("#view-run").is_visible()
    page.keyboard.press("ArrowLeft")
    assert page.locator("#view-preview").is_visible()

    # A typo in a template: the check names it at its line, as `scorers check` would.
    analyze = "prompts/hallucination/analyze.j2"
    _edit(page, "pane-b", analyze, lambda text: text.replace("Claims ({{ preprocess.claims | length }})", "Claims ({{ preprocess.clams | length }})"))
    problem = page.locator("#problems .problem")
    problem.wait_for()
    built_in = (ROOT / analyze).read_text(encoding="utf-8").splitlines()
    line = next(number for number, text in enumerate(built_in, 1) if "Claims ({{ preprocess.claims | length }})" in text)
    assert f"mine/{analyze}:{line}:" in problem.inner_text() and "clams" in problem.inner_text()
    assert page.locator("#pane-b .gutter div.bad").get_attribute("data-line") == str(line)
    _edit(page, "pane-b", analyze, lambda text: text.replace("preprocess.clams", "preprocess.claims"))
    page.wait_for_selector("#problems-title:text('Checks: no problems')")
    assert page.locator("#pane-b .gutter div.bad").count() == 0

    # The preview follows the wording of the template.
    extract = "prompts/claims/extract.j2"
    _edit(page, "pane-b", extract, lambda text: text.replace("Break the text below", "Split the text below"))
    page.wait_for_selector("#prompts section[data-step='preprocess'] pre.user:has-text('Split the text below')")

    # Run 20 items: the estimate first, then agreement with the labels.
    page.click("#tab-run")
    page.wait_for_selector("#estimate:has-text('20 items: about 60 judge calls')")
    page.click("#run")
    page.wait_for_selector("#view-results:not([hidden]) #agreement tr[data-figure='f1']")
    first_f1 = page.locator("#agreement tr[data-figure='f1'] td").first.inner_text()
    assert page.locator("#results-head").inner_text().startswith("Run workbench-hallucination-")
    assert "20 of 20 items scored" in page.locator("#results-head").inner_text()
    assert page.locator("#items tbody tr").count() == 20
    assert page.locator("#comparison-box").is_hidden()
    # With the run's answers, the preview shows the later steps too.
    page.click("#tab-preview")
    page.wait_for_selector("#prompts section[data-step='analyze']")

    # A wording the scripted judge reads as "be strict": it answers differently.
    _edit(page, "pane-b", analyze, lambda text: text.replace("Decide, for each claim", "When you hesitate, answer yes. Decide, for each claim"))
    page.wait_for_selector("#prompts section[data-step='analyze'] pre.user:has-text('When you hesitate')")
    page.click("#tab-run")
    page.click("#run")
    page.wait_for_selector("#comparison-box:not([hidden])")
    title = page.locator("#comparison-title").inner_text()
    assert "the run before" in title and "on 20 shared labelled items" in title
    assert page.locator("#agreement tr[data-figure='f1'] td").first.inner_text() != first_f1
    fixed = page.locator("#fixed").inner_text()
    assert fixed.startswith("fixed ") and not fixed.startswith("fixed 0")
    assert page.locator("#comparison tr[data-figure='recall'] td").nth(2).inner_text().startswith("+")
    assert page.locator("#comparison tr[data-figure='f1'] td").nth(4).inner_text() in ("yes", "no")

    # An item opens on its prompts, the judge's answers per step, the reason and the label.
    page.locator("#fixed button.link").first.click()
    dialog = page.locator("#item-dialog")
    dialog.wait_for()
    assert "label flag" in page.locator("#item-title").inner_text()
    assert '"verdict": "yes"' in dialog.locator("section.step[data-step='analyze'] pre.answer").inner_text()
    assert "word overlap" in dialog.inner_text()
    page.click("#item-close")

    # Save: the diff first, then the files and the version.
    page.click("#save")
    diffs = page.locator("#diffs")
    diffs.wait_for()
    assert "+When you hesitate, answer yes. Decide, for each claim" in diffs.inner_text()
    assert "-Break the text below" in diffs.inner_text() and "+Split the text below" in diffs.inner_text()
    page.click("#save-confirm")
    page.click("#tab-versions")
    page.wait_for_selector("#versions tr[data-version='1']")
    assert "workbench-hallucination-v1" in page.locator("#versions tr[data-version='1']").inner_text()
    saved = (tmp_path / "mine" / analyze).read_text(encoding="utf-8")
    assert "When you hesitate, answer yes." in saved and "preprocess.claims" in saved
    assert "Split the text below" in (tmp_path / "mine" / extract).read_text(encoding="utf-8")

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "workbench.png"))
    assert errors == []


def test_a_threshold_is_set_in_the_scorer_entry_and_nowhere_else() -> None:
    from engine.workbench.thresholds import set_threshold

    text = "# mine\nprompts: prompts\nscorers:\n  strict:  # a variant\n    extends: hallucination\n    name: Strict\n  other:\n    extends: bias\n"
    once = set_threshold(text, "strict", 0.25)
    assert once == text.replace("    extends: hallucination\n", "    extends: hallucination\n    threshold: 0.25\n", 1)
    assert set_threshold("scorers:\n  mine:\n    name: Mine\n", "mine", 0.5) == "scorers:\n  mine:\n    threshold: 0.5\n    name: Mine\n"
    assert set_threshold(once, "strict", 0.4) == once.replace("threshold: 0.25", "threshold: 0.4")
    with pytest.raises(Exception, match="hallucination is not written in this catalog file"):
        set_threshold(text, "hallucination", 0.3)


@pytest.mark.slow
def test_calibrate_writes_the_best_threshold_into_the_yaml_and_runs_flag_there(workbench: Workbench) -> None:
    body = {"scorer": "hallucination", "data": str(PAIRS), "size": 12, "seed": 2, "files": {}}
    _request(workbench, "/api/run", body)
    run = _wait(workbench)["run"]
    status, found = _request(workbench, "/api/calibrate", {**body, "run": run, "apply": True, "text": "scorers: {}\n"})
    assert status == 200, found
    best = found["calibration"]["best"]["threshold"]
    assert found["text"] == f"scorers:\n  hallucination:\n    extends: hallucination\n    threshold: {best:g}\n"
    edited = {**body, "files": {"scorers.yaml": found["text"]}}
    assert _request(workbench, "/api/check", edited)[1]["problems"] == []
    _request(workbench, "/api/run", edited)
    rerun = _wait(workbench)["run"]
    assert rerun != run
    assert _request(workbench, "/api/report", {"scorer": "hallucination", "run": rerun})[1]["threshold"] == best


@pytest.mark.slow
def test_a_threshold_written_in_the_yaml_is_where_scorers_eval_flags(judge: JudgeServer, tmp_path: Path) -> None:
    from helpers.strictness import labelled_data, script_strictness

    script_strictness(judge)
    catalog = tmp_path / "scorers.yaml"
    catalog.write_text("scorers:\n  hallucination:\n    extends: hallucination\n    threshold: 0.75\n", encoding="utf-8")
    shown = runner.invoke(app, ["eval", str(labelled_data(tmp_path)), "--scorer", "hallucination", "--config", str(catalog), "--store", str(tmp_path / "r.sqlite")])
    assert shown.exit_code == 0, shown.output
    assert "A score above 0.75 flags an item; on it, it passes" in " ".join(shown.stdout.split())
    flagged_at = runner.invoke(app, ["eval", str(labelled_data(tmp_path)), "--scorer", "hallucination", "--config", str(catalog), "--threshold", "hallucination=0.5", "--store", str(tmp_path / "r.sqlite")])
    assert "A score above 0.5 flags an item" in " ".join(flagged_at.stdout.split())  # the run's own threshold wins
    catalog.write_text("scorers:\n  hallucination:\n    extends: hallucination\n    threshold: .inf\n", encoding="utf-8")
    refused = runner.invoke(app, ["check", str(catalog)])
    assert refused.exit_code == 1 and "threshold" in refused.stdout


def _doc_commands() -> list[str]:
    import re

    text = (ROOT / "docs" / "workbench.md").read_text(encoding="utf-8")
    return [line.strip() for block in re.findall(r"```bash\n(.*?)```", text, re.DOTALL) for line in block.splitlines() if line.strip()]


@pytest.mark.slow
def test_the_command_of_the_docs_starts_the_workbench_and_ctrl_c_stops_it(tmp_path: Path) -> None:
    import shlex
    import signal
    import subprocess

    (tmp_path / "examples").mkdir()
    shutil.copy(PAIRS, tmp_path / "examples" / PAIRS.name)
    commands = _doc_commands()
    assert commands and all(command.startswith("scorers workbench ") for command in commands)
    for command in commands:
        started = subprocess.Popen(
            [sys.executable, "-c", "from engine.cli import app; app()", *shlex.split(command)[1:], "--store", str(tmp_path / "r.sqlite")],
            cwd=tmp_path, stderr=subprocess.PIPE, text=True,
        )
        try:
            assert started.stderr is not None
            line = started.stderr.readline()
            assert line.startswith("The workbench for my-catalog is at http://127.0.0.1:"), line
            url = line.split(" is at ")[1].strip()
            with urllib.request.urlopen(url) as page:
                assert page.status == 200
            with pytest.raises(urllib.error.HTTPError, match="403"):
                urllib.request.urlopen(url.split("?")[0])
        finally:
            started.send_signal(signal.SIGINT)
            assert started.wait(timeout=30) == 0


@pytest.mark.slow
def test_stop_keeps_what_is_done_and_running_again_resumes_it(workbench: Workbench, judge: JudgeServer, tmp_path: Path) -> None:
    import time

    from helpers.scripted import between, claims_of

    from engine.testing import Reply

    judge.on("Claims", lambda request: Reply(answer={"claims": claims_of(between(request.prompt, "output"))}, delay=0.3))
    body = {"scorer": "hallucination", "data": str(PAIRS), "size": 16, "seed": 5, "files": {}}
    started = _request(workbench, "/api/run", body)[1]
    deadline = time.monotonic() + 60
    while _request(workbench, "/api/status", {})[1]["run"]["done"] < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    stopped = _request(workbench, "/api/stop", {})[1]["run"]
    assert stopped["status"] == "stopped" and 3 <= stopped["done"] < 16
    store = open_store(tmp_path / "results.sqlite")
    assert store is not None
    kept = store.query(run=started["run"])
    assert len(kept) >= stopped["done"] and store.get_run(started["run"]).status == "interrupted"  # type: ignore[union-attr]

    again = _request(workbench, "/api/run", body)[1]
    assert again["run"] == started["run"]
    finished = _wait(workbench)
    assert finished["status"] == "complete" and finished["done"] == 16 and finished["reused"] == len(kept)
    report = _request(workbench, "/api/report", {"scorer": "hallucination", "run": started["run"]})[1]
    assert len(report["items"]) == 16 and report["agreement"]["labelled"] == 16


@pytest.mark.slow
def test_stopping_the_server_keeps_what_the_run_finished(workbench: Workbench, judge: JudgeServer, tmp_path: Path) -> None:
    import time

    from helpers.scripted import between, claims_of

    from engine.testing import Reply

    # Slow enough that the run is still going when the server stops: calls, not items, fill
    # the concurrency bound, so every item's claims are asked at once.
    judge.on("Claims", lambda request: Reply(answer={"claims": claims_of(between(request.prompt, "output"))}, delay=0.3))
    judge.on("Reason", lambda request: Reply(answer={"reason": "scripted"}, delay=3.0))
    started = _request(workbench, "/api/run", {"scorer": "hallucination", "data": str(PAIRS), "size": 16, "seed": 6, "files": {}})[1]
    deadline = time.monotonic() + 60
    while _request(workbench, "/api/status", {})[1]["run"]["done"] < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    workbench.stop()
    store = open_store(tmp_path / "results.sqlite")
    assert store is not None
    run = store.get_run(started["run"])
    assert run is not None and run.status == "interrupted"
    assert 2 <= len(store.query(run=started["run"])) < 16


def test_the_page_needs_no_network_and_ships_in_the_package() -> None:
    import re

    import engine.workbench

    static = Path(engine.workbench.__file__).resolve().parent / "static"
    assert sorted(path.name for path in static.iterdir()) == ["editor.js", "index.html", "page.js", "review.css", "review.html", "review.js", "workbench.css", "workbench.js"]
    for path in static.iterdir():
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"""(src|href)=["']?(https?:)?//|@import|url\(\s*["']?(https?:)?//""", text), path.name


def test_drafts_do_not_pile_up_but_a_runs_draft_stays(tmp_path: Path) -> None:
    from engine.workbench.workspace import KEPT_DRAFTS, Workspace

    workspace = Workspace(tmp_path / "mine")
    pinned = workspace.draft({})
    workspace.pinned = {pinned}
    for _ in range(3 * KEPT_DRAFTS):
        latest = workspace.draft({"prompts/x.j2": "{{ output }}"})
    drafts = list(latest.parent.parent.glob("draft-*"))
    assert len(drafts) <= KEPT_DRAFTS + 2 and pinned.is_file() and latest.is_file()
    workspace.close()
    assert not latest.exists()


@pytest.mark.slow
def test_a_catalog_with_problems_opens_to_be_fixed(judge: JudgeServer, tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "scorers.yaml").write_text("scorers:\n  strict:\n    extends: hallucination\n    nmae: Strict\n", encoding="utf-8")
    started = Workbench(folder, tmp_path / "results.sqlite").start()
    try:
        state = _request(started, "/api/state", {})[1]
        assert state["scorers"][0] == {"id": "strict", "origin": "yours"} and {"id": "hallucination", "origin": "built-in"} in state["scorers"]
        opened = _request(started, "/api/scorer", {"scorer": "strict"})[1]
        assert [file["path"] for file in opened["files"]] == ["scorers.yaml"] and opened["yours"] is True
        problems = _request(started, "/api/check", {"files": {}})[1]["problems"]
        assert [(problem["path"], problem["line"]) for problem in problems] == [("scorers.yaml", 4)]
        assert "nmae" in problems[0]["message"]
        fixed = {"scorers.yaml": "scorers:\n  strict:\n    extends: hallucination\n    name: Strict\n"}
        assert _request(started, "/api/check", {"files": fixed})[1]["problems"] == []
        assert len(_request(started, "/api/scorer", {"scorer": "strict", "files": fixed})[1]["files"]) > 1
    finally:
        started.stop()


def test_a_run_the_judge_refuses_ends_with_one_line_and_no_key(workbench: Workbench, judge: JudgeServer) -> None:
    from engine.testing import Reply

    judge.on("Claims", Reply.fail(401, "Incorrect API key provided: sk-test-secret-key-123"))
    _request(workbench, "/api/run", {"scorer": "hallucination", "data": str(PAIRS), "size": 4, "seed": 0, "files": {}})
    ended = _wait(workbench)
    assert ended["status"] == "failed" and ended["error"] and "\n" not in ended["error"]
    assert "sk-test-secret-key-123" not in json.dumps(ended)

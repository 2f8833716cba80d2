"""The report as people see it: one offline HTML file opened in a real headless Chromium
(Debian's `chromium`, which .ci/run installs): the figures are on the page, a row opens on
its claims, verdicts and prompts, the search box filters, and a screenshot is kept."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from helpers.strictness import labelled_data, script_strictness, strict_variant
from typer.testing import CliRunner

from engine.cli import app
from engine.testing import JudgeServer

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(os.environ.get("SCORERS_TEST_ARTIFACTS", ROOT / "test-artifacts"))
runner = CliRunner()


@pytest.fixture
def report(judge: JudgeServer, tmp_path: Path) -> Path:
    script_strictness(judge)
    store = tmp_path / "r.sqlite"
    compared = runner.invoke(
        app, ["compare", str(labelled_data(tmp_path)), "--scorer", "hallucination", "--config", str(strict_variant(tmp_path)), "--store", str(store), "--run", "cmp"]
    )
    assert compared.exit_code == 0, compared.output
    path = tmp_path / "report.html"
    written = runner.invoke(app, ["report", "cmp", "--store", str(store), "-o", str(path)])
    assert written.exit_code == 0, written.output
    return path




def test_the_report_is_one_file_that_needs_no_network(report: Path) -> None:
    html = report.read_text(encoding="utf-8")
    assert not re.search(r"""<(script|link|img)[^>]+(src|href)=["']?(https?:)?//""", html)
    assert "<svg" in html and "<script>" in html


def test_user_text_is_escaped_not_run(judge: JudgeServer, tmp_path: Path) -> None:
    script_strictness(judge)
    data = tmp_path / "hostile.jsonl"
    data.write_text('{"id": "x", "output": "<script>alert(1)</script>", "context": ["c"], "expected": false}\n', encoding="utf-8")
    store = tmp_path / "r.sqlite"
    assert runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "h"]).exit_code == 0
    assert runner.invoke(app, ["report", "h", "--store", str(store), "-o", str(tmp_path / "h.html")]).exit_code == 0
    html = (tmp_path / "h.html").read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_unknown_run_is_one_line(tmp_path: Path, judge: JudgeServer) -> None:
    script_strictness(judge)
    store = tmp_path / "r.sqlite"
    runner.invoke(app, ["eval", str(labelled_data(tmp_path)), "--scorer", "hallucination", "--store", str(store), "--run", "a"])
    missing = runner.invoke(app, ["report", "nope", "--store", str(store), "-o", str(tmp_path / "x.html")])
    assert missing.exit_code == 2 and "no run named 'nope'" in missing.stderr


@pytest.mark.slow
def test_the_report_in_a_headless_browser(report: Path, chromium: object) -> None:
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})  # type: ignore[attr-defined]
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
    page.goto(report.as_uri())

    # The figures: each variant's agreement, and the comparison's verdict changes.
    strict = page.locator("#summary tr[data-scorer='cmp:hallucination@strict']")
    assert strict.locator("[data-figure='f1']").inner_text() == "0.8"
    assert strict.locator("[data-figure='accuracy']").inner_text() == "0.8"
    assert page.locator("#summary tr[data-scorer='cmp:hallucination@builtin'] [data-figure='f1']").inner_text() == "0.667"
    assert "fixed 1 i2" in " ".join(page.locator(".comparison").inner_text().split())
    assert page.locator("svg.histogram").count() == 2
    assert page.locator("#shown").inner_text() == "5 of 5 items"

    # A row opens on the judge's answers and the exact prompts sent.
    item = page.locator("tbody.item[data-id='i2']")
    detail = item.locator("tr.detail")
    assert not detail.is_visible()
    item.locator("tr.row").click()
    assert detail.is_visible()
    assert "scripted reason" in detail.locator("pre.reason").first.inner_text()
    assert '"verdict": "yes"' in detail.inner_text()
    sent = detail.locator(".outcome[data-key='cmp:hallucination@strict'] details[data-step='analyze']")
    assert not sent.locator("pre.prompt").is_visible()
    sent.locator("summary").click()
    assert "STRICT: speculation is a hallucination" in sent.locator("pre.prompt").inner_text()
    builtin = detail.locator(".outcome[data-key='cmp:hallucination@builtin'] details[data-step='analyze'] pre.prompt").text_content() or ""
    assert "Decide, for each claim" in builtin and "STRICT" not in builtin

    # The search box filters the items.
    page.fill("#search", "maybe")
    assert page.locator("#shown").inner_text() == "2 of 5 items"
    assert [body.get_attribute("data-id") for body in page.locator("tbody.item:visible").all()] == ["i2", "i3"]
    page.fill("#search", "")
    assert page.locator("#shown").inner_text() == "5 of 5 items"

    # A disagreement listed under a scorer's figures opens its item.
    page.locator("#items tbody.item[data-id='i3'] tr.detail").evaluate("row => row.hidden = true")
    page.locator(".scorer a.open-item[data-target='i3']").first.click()
    assert page.locator("tbody.item[data-id='i3'] tr.detail").is_visible()

    # A column sorts on click: the strict variant's scores, highest first on the second click.
    header = page.locator("#items th[data-key='score-1']")
    header.click()
    header.click()
    assert page.locator("tbody.item").first.get_attribute("data-id") == "i1"

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
    assert (ARTIFACTS / "report.png").stat().st_size > 10_000
    assert errors == []


def test_a_report_of_two_runs_compares_them(judge: JudgeServer, tmp_path: Path) -> None:
    script_strictness(judge)
    store, data = ["--store", str(tmp_path / "r.sqlite")], str(labelled_data(tmp_path))
    assert runner.invoke(app, ["eval", data, "--scorer", "hallucination", *store, "--run", "before"]).exit_code == 0
    assert runner.invoke(app, ["eval", data, "--scorer", "hallucination", "--config", str(strict_variant(tmp_path)), *store, "--run", "after"]).exit_code == 0
    written = runner.invoke(app, ["report", "before", "--compare", "after", *store, "-o", str(tmp_path / "r.html")])
    assert written.exit_code == 0, written.output
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "before:hallucination → after:hallucination" in html
    assert 'data-key="score-0">before:hallucination' in html and 'data-key="score-1">after:hallucination' in html
    assert html.count('<tbody class="item"') == 5

"""What the workbench's end-to-end tests share: a workbench started for one test (cheap: a
fraction of a second), requests made as its page makes them, one Chromium per test module
(a browser launch costs more than a workbench), and a page opened on it that fails the test
on any script error."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from helpers.scripted import script_word_overlap

from engine.testing import JudgeServer
from engine.workbench.server import Workbench

ROOT = Path(__file__).resolve().parents[2]
PAIRS = ROOT / "examples" / "halueval_qa_pairs.jsonl"
NUMERIC = ROOT / "examples" / "halueval_qa.jsonl"


@contextmanager
def started(catalog: Path, store: Path, **options: Any) -> Iterator[Workbench]:
    workbench = Workbench(catalog, store, **options).start()
    try:
        yield workbench
    finally:
        workbench.stop()


@pytest.fixture
def workbench(judge: JudgeServer, tmp_path: Path) -> Iterator[Workbench]:
    """A workbench on an empty catalog folder of its own and the labelled pairs, its runs
    judged by the word-overlap judge."""
    script_word_overlap(judge)
    with started(tmp_path / "mine", tmp_path / "results.sqlite", data=PAIRS) as running:
        yield running


def call(workbench: Workbench, name: str, body: dict[str, Any] | None = None, *, headers: dict[str, str] | None = None, raw: bytes | None = None) -> tuple[int, Any]:
    """POST /api/NAME as the page does (its cookie, its session header, JSON); `headers`
    replace or remove (value "") what the page would send."""
    sent = {"Content-Type": "application/json", "Cookie": f"scorers_workbench={workbench.token}", "X-Workbench-Session": workbench.session_key}
    for key, value in (headers or {}).items():
        sent.pop(key, None)
        if value:
            sent[key] = value
    return fetch(workbench, f"/api/{name}", raw if raw is not None else json.dumps(body or {}).encode(), sent)


def fetch(workbench: Workbench, path: str, data: bytes | None, headers: dict[str, str]) -> tuple[int, Any]:
    """GET `path` (POST `data` when given) with exactly these headers: the status and the
    answer, read as JSON when it is JSON."""
    request = urllib.request.Request(f"http://127.0.0.1:{workbench.port}{path}", data=data, headers=headers)
    try:
        with urllib.request.urlopen(request) as response:
            text = response.read().decode()
            return response.status, json.loads(text) if text.startswith("{") else text
    except urllib.error.HTTPError as exc:
        text = exc.read().decode()
        return exc.code, json.loads(text) if text.startswith("{") else text


def ok(workbench: Workbench, name: str, body: dict[str, Any] | None = None) -> Any:
    status, answer = call(workbench, name, body)
    assert status == 200, (name, status, answer)
    return answer


def wait_run(workbench: Workbench, timeout: float = 90) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = ok(workbench, "status")["run"]
        if run is not None and run["status"] != "running":
            return run  # type: ignore[no-any-return]
        time.sleep(0.1)
    raise AssertionError("the run did not end")


class Tab:
    """A browser tab on a workbench: its page, and the script errors it met."""

    def __init__(self, context: Any, workbench: Workbench, width: int = 1280, height: int = 800) -> None:
        self.page = context.new_page()
        self.page.set_viewport_size({"width": width, "height": height})
        self.page.set_default_timeout(30_000)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.workbench = workbench

    def open(self, url: str | None = None) -> Tab:
        self.page.goto(url or self.workbench.url)
        self.page.wait_for_function("window.workbenchReady === true")
        return self

    def edit(self, pane: str, path: str, change: Any) -> None:
        """Pick `path` in an editor pane and replace its text by `change(text)`, as typing does."""
        self.page.select_option(f"#{pane} .file-pick", path)
        area = self.page.locator(f"#{pane} textarea")
        area.fill(change(area.input_value()))

    def sample(self, size: int) -> Tab:
        """Runs and saved versions measure `size` items (a small sample keeps a test quick)."""
        self.page.click("#tab-run")
        self.page.fill("#size", str(size))
        self.page.dispatch_event("#size", "change")
        self.page.click("#tab-preview")
        return self

    def text(self, selector: str) -> str:
        return str(self.page.locator(selector).inner_text())


@pytest.fixture
def browser_context(chromium: Any) -> Iterator[Any]:
    """A fresh browser profile for one test (cookies, session storage), in the worker's chromium."""
    context = chromium.new_context()
    yield context
    context.close()

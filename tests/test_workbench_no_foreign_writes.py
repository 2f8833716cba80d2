"""No write from another page: the workbench answers its own page only (a header only its page
can set, its own origin, JSON), writes only the catalog's own kinds of files, and reads only
the data sets it offers. The attack is made for real: a page served on another port of
127.0.0.1, opened in the same Chromium after the workbench's page (so the browser holds the
workbench's SameSite=Strict cookie, which it sends across ports of one host)."""

from __future__ import annotations

import http.server
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.workbench_pages import PAIRS, ROOT, Tab, browser_context, call, ok, started  # noqa: F401 (fixtures)

from engine.workbench.server import Workbench

ATTACK = """<!doctype html><html><body>
<form id="form" method="post" enctype="text/plain" action="http://127.0.0.1:{port}/api/save">
  <input name='{{"scorer": "hallucination", "data": "{data}", "size": 2, "seed": 0, "files": {{"prompts/planted-by-form.j2": "' value='"}}}}'>
</form>
<script>
window.attempts = Promise.all([
  fetch("http://127.0.0.1:{port}/api/save", {{method: "POST", mode: "no-cors", credentials: "include",
    headers: {{"Content-Type": "text/plain"}}, body: JSON.stringify({{scorer: "hallucination", data: "{data}", size: 2, seed: 0,
    files: {{"prompts/planted.j2": "planted"}}}})}}).then(() => "sent", (error) => String(error)),
  fetch("http://127.0.0.1:{port}/api/save", {{method: "POST", credentials: "include",
    headers: {{"Content-Type": "application/json"}}, body: JSON.stringify({{scorer: "hallucination", data: "{data}", size: 2, seed: 0,
    files: {{"prompts/planted.j2": "planted"}}}})}}).then((response) => String(response.status), (error) => "blocked"),
]);
</script></body></html>"""


@pytest.fixture
def workbench(tmp_path: Path) -> Iterator[Workbench]:
    with started(tmp_path / "mine", tmp_path / "results.sqlite", data=PAIRS) as running:
        yield running


@pytest.fixture
def other_port_page(workbench: Workbench) -> Iterator[str]:
    """A page of another site on another port of 127.0.0.1 that tries to write into the catalog."""
    page = ATTACK.format(port=workbench.port, data=str(PAIRS)).encode()

    class Attacker(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Attacker)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_a_page_on_another_port_cannot_write_into_the_catalog(workbench: Workbench, browser_context: Any, other_port_page: str, tmp_path: Path) -> None:
    tab = Tab(browser_context, workbench).open()  # the tuner's page: the browser now holds the cookie
    statuses: list[tuple[str, int]] = []
    attacker = browser_context.new_page()
    attacker.on("response", lambda response: statuses.append((response.request.method, response.status)) if "/api/save" in response.url else None)
    attacker.goto(other_port_page)
    answers = attacker.evaluate("window.attempts")
    assert answers[1] == "blocked"  # a JSON request from another origin needs a preflight, which is refused
    with attacker.expect_navigation():
        attacker.evaluate("document.getElementById('form').submit()")
    assert "is refused: only the workbench's own page may call it" in attacker.locator("body").inner_text()
    assert statuses and all(status == 403 for method, status in statuses if method == "POST"), statuses
    assert not (tmp_path / "mine").exists()  # nothing written, not even the catalog file
    assert tab.errors == []


def test_no_other_page_can_show_the_workbench_in_a_frame(workbench: Workbench, browser_context: Any) -> None:
    """A page of another port framed the whole workbench, where a click on it would have been a
    click on the workbench (clickjacking): every answer now forbids any frame."""
    page = f'<!doctype html><html><body><iframe id="bench" src="{workbench.url}" width="900" height="600"></iframe></body></html>'.encode()

    class Framer(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Framer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        framer = browser_context.new_page()
        framer.goto(f"http://127.0.0.1:{server.server_address[1]}/")
        framer.wait_for_timeout(1500)
        [framed] = [frame for frame in framer.frames if frame is not framer.main_frame]
        assert framed.evaluate("document.querySelector('#run') === null")  # the workbench's page never loaded in it
    finally:
        server.shutdown()
        server.server_close()
    for path in ("/", "/review", "/static/page.js"):
        with urllib.request.urlopen(f"http://127.0.0.1:{workbench.port}{path}?token={workbench.token}") as response:
            assert response.headers["X-Frame-Options"] == "DENY" and "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]


def test_every_api_request_needs_the_page_s_header_its_origin_and_json(workbench: Workbench, tmp_path: Path) -> None:
    body = {"scorer": "hallucination", "data": str(PAIRS), "size": 2, "seed": 0, "files": {"prompts/planted.j2": "x"}}
    assert call(workbench, "state", {})[0] == 200
    assert call(workbench, "state", {}, headers={"X-Workbench-Session": ""})[0] == 403
    assert call(workbench, "state", {}, headers={"X-Workbench-Session": "guessed"})[0] == 403
    foreign = f"http://127.0.0.1:{workbench.port + 1}"
    assert call(workbench, "save", body, headers={"Origin": foreign})[0] == 403
    assert call(workbench, "save", body, headers={"Origin": "null"})[0] == 403
    assert call(workbench, "save", body, headers={"Sec-Fetch-Site": "same-site"})[0] == 403
    assert call(workbench, "save", body, headers={"Sec-Fetch-Site": "cross-site"})[0] == 403
    status, answer = call(workbench, "save", body, headers={"Content-Type": "text/plain"})
    assert status == 415 and "JSON" in answer["error"]
    assert call(workbench, "save", body, headers={"Content-Type": "application/x-www-form-urlencoded"})[0] == 415
    assert not (tmp_path / "mine").exists()
    # The page's own requests pass: same origin, its header, JSON.
    own = f"http://127.0.0.1:{workbench.port}"
    assert call(workbench, "state", {}, headers={"Origin": own, "Sec-Fetch-Site": "same-origin"})[0] == 200


def test_the_page_carries_the_session_header_it_was_given(workbench: Workbench, browser_context: Any) -> None:
    tab = Tab(browser_context, workbench)
    sent: list[str | None] = []
    tab.page.on("request", lambda request: sent.append(request.headers.get("x-workbench-session")) if "/api/" in request.url else None)
    tab.open()
    assert sent and set(sent) == {workbench.session_key}
    assert workbench.session_key != workbench.token  # the header is not the link's token, nor a cookie
    assert all(workbench.session_key not in cookie["value"] for cookie in browser_context.cookies())


def test_a_save_writes_only_the_catalog_s_own_kinds_of_files(workbench: Workbench, tmp_path: Path) -> None:
    body = {"scorer": "hallucination", "data": str(PAIRS), "size": 2, "seed": 0}
    refused = [".github/workflows/x.yml", "notes.md", "data.json", "readme.txt", "other.yaml", "prompts/x.py", "schemas/x.j2", "schemas/x.md",
               "variants/strict/scorers.yaml", "prompts/../ci.yml"]
    for path in refused:
        status, answer = call(workbench, "save", {**body, "files": {path: "name: x\n"}})
        assert status == 403, (path, answer)
        assert "catalog" in answer["error"], answer
    assert not (tmp_path / "mine").exists()
    assert call(workbench, "diff", {"files": {".github/workflows/x.yml": "x"}})[0] == 403
    assert call(workbench, "check", {"files": {"notes.md": "x"}})[0] == 403


def test_items_are_read_only_from_the_data_sets_offered(workbench: Workbench, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_text('{"id": "secret", "output": "a private reply"}\n', encoding="utf-8")
    for data in (str(elsewhere), "/etc/hosts", str(ROOT / "tests" / "fixtures" / ".." / ".." / "examples" / "nope.jsonl")):
        status, answer = call(workbench, "items", {"data": data, "scorer": "hallucination"})
        assert status == 403, (data, answer)
        assert "secret" not in str(answer) and "not a data set of this workbench" in answer["error"]
    for route in ("preview", "estimate", "run"):
        status, answer = call(workbench, route, {"scorer": "hallucination", "data": str(elsewhere), "item": "secret", "size": 1, "seed": 0, "files": {}})
        assert status == 403, (route, answer)
    offered = [data["path"] for data in ok(workbench, "state")["datasets"]]
    assert offered[0] == str(PAIRS) and len(offered) == len(set(offered))
    assert ok(workbench, "items", {"data": offered[0], "scorer": "hallucination"})["total"] > 0

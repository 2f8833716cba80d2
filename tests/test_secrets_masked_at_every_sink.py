"""One scrubber at every sink (engine/scrub.py): what a run stores, logs, raises, exports and
posts never holds a secret, whether it is a key this process was given or anything shaped
like a credential in the text it handles."""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path

import pytest
import yaml
from helpers.scripted import script_hallucination
from typer.testing import CliRunner

from engine import ConfigError, LiveScorer, SQLiteStore, create_hallucination_scorer, run_evals
from engine.cli import app
from engine.runs.monitors import load_monitors
from engine.testing import JudgeServer

runner = CliRunner()

#: Secrets of the shapes a reply, a context or a URL may carry, and what must not survive of each.
SECRETS = {
    "google": ("key AIzaSyA1234567890abcdefghijklmnopqrstuv here", "AIzaSyA1234567890abcdefghijklmnopqrstuv"),
    "database url": ("db at postgresql://app:Sup3rS3cret@db.internal:5432/prod", "Sup3rS3cret"),
    "url without its scheme": ("the hook is alice:Wh00kPass@hooks.internal/alert?x=1", "Wh00kPass"),
    "basic": ("Authorization: Basic dXNlcjpodW50ZXIyMjIy", "dXNlcjpodW50ZXIyMjIy"),
    "jwt": (
        "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    "password field": ('the config was {"password": "hunter2hunter2", "user": "bob"}', "hunter2hunter2"),
    "openai": ("use sk-proj-abcdefghijklmnop0123456789 for it", "sk-proj-abcdefghijklmnop0123456789"),
}


def test_live_content_masks_every_credential_shape(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    store = tmp_path / "r.sqlite"
    live = LiveScorer(create_hallucination_scorer(options={"context": ["facts"]}), store=store)
    for name, (text, _) in SECRETS.items():
        live.submit(text, input=f"question about {name}", run_id=name, metadata={"note": text})
    assert live.close(timeout=30)
    with SQLiteStore(store) as opened:
        stored = json.dumps([record.model_dump(mode="json") for record in opened.query(run="live")])
    for name, (_, secret) in SECRETS.items():
        assert secret not in stored, name
    assert "bob" in stored  # what is not a secret stays


def test_a_batch_run_stores_no_secret_not_even_the_judges_own_key(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    own_key = "sk-test-secret-key-123"  # the judge's key in this test (see conftest)
    rows = [{"id": name, "output": text, "context": [f"ctx {text}"]} for name, (text, _) in SECRETS.items()]
    rows.append({"id": "own key", "output": f"the key is {own_key} ok", "context": ["c"], "metadata": {"api_key": "abc123456"}})
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    store = tmp_path / "r.sqlite"
    shown = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "b"])
    assert shown.exit_code == 0, shown.output
    with SQLiteStore(store) as opened:
        stored = json.dumps([record.model_dump(mode="json") for record in opened.query(run="b")])
    for name, (_, secret) in SECRETS.items():
        assert secret not in stored, name
    assert own_key not in stored and "abc123456" not in stored
    exported = runner.invoke(app, ["results", "--run", "b", "--store", str(store), "--format", "jsonl"])
    assert exported.exit_code == 0 and own_key not in exported.stdout and "Sup3rS3cret" not in exported.stdout
    # In Python, what the run made of each item (prompts, answers, reasons) is masked too; the
    # items themselves are the caller's own, handed back as given.
    in_python = run_evals(rows, create_hallucination_scorer())
    assert own_key not in json.dumps([{key: outcome.model_dump(mode="json") for key, outcome in item.results.items()} for item in in_python.items])


def test_a_webhook_s_credentials_reach_no_log_and_no_error(judge: JudgeServer, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://alerts:Pa55w0rdXYZ@127.0.0.1:{port}/hook?token=T0kenValue999&channel=ops"
    script_hallucination(judge)
    store = tmp_path / "r.sqlite"
    live = LiveScorer(create_hallucination_scorer(options={"context": ["c"]}), store=store)
    for number in range(5):
        live.submit("WRONG", input="q", run_id=f"r{number}")
    assert live.close(timeout=30)
    monitors = tmp_path / "m.yaml"
    monitor = {"scorer": "hallucination", "statistic": "mean", "above": 0.5, "window": 5, "min_samples": 5, "alert": [{"webhook": url, "retries": 0}]}
    monitors.write_text(yaml.safe_dump({"monitors": {"rising": monitor}}), encoding="utf-8")
    with caplog.at_level(logging.DEBUG):
        shown = runner.invoke(app, ["monitor", "--monitors", str(monitors), "--store", str(store), "--send", "--json"])
    assert shown.exit_code == 1
    everything = shown.output + caplog.text
    assert "Pa55w0rdXYZ" not in everything and "T0kenValue999" not in everything
    assert f"http://127.0.0.1:{port}" in everything  # the host is named

    # A YAML mistake beside the URL names the line, not the secret.
    monitor["alert"] = [{"webhook": url.replace("http://", "ftp://")}]
    monitors.write_text(yaml.safe_dump({"monitors": {"rising": monitor}}), encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_monitors(monitors)
    assert "Pa55w0rdXYZ" not in str(refused.value) and "T0kenValue999" not in str(refused.value)
    assert "m.yaml:" in str(refused.value)


def test_what_only_looks_like_a_field_name_is_left_as_it_is() -> None:
    from engine.scrub import scrub

    assert scrub("data /etc/passwd: not found") == "data /etc/passwd: not found"
    assert scrub("max_tokens: 2048, total_tokens=55") == "max_tokens: 2048, total_tokens=55"
    assert scrub("X-Api-Key: zzzz1234") == "X-Api-Key: ***"
    assert scrub("write to note:someone@example.com today") == "write to note:someone@example.com today"

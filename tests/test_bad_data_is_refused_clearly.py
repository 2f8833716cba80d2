"""Bad data gets a clear one-line error naming the file and line, never a silent best score,
never a traceback, and never lost items."""

from __future__ import annotations

from engine.judge import JudgeSettings
import json
import logging
from pathlib import Path

import pytest
from engine.testing import JudgeServer
from helpers.scripted import outputs_judged, script_hallucination
from typer.testing import CliRunner

from engine import ConfigError, DataError, RunInputError, SQLiteStore, create_hallucination_scorer, load_scorers, run_evals
from engine.cli import app

runner = CliRunner()


def line(output: str, **more: object) -> str:
    return json.dumps({"output": output, "context": ["facts"], **more})


def test_a_malformed_line_is_that_lines_error_counted_and_stored(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join([line("ok"), line("WRONG"), '{"output": "unterminated', line("ok. WRONG")]) + "\n", encoding="utf-8")
    store = tmp_path / "r.sqlite"

    result = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", str(store), "--run", "r", "--json"])

    summary = json.loads(result.stdout)
    assert result.exit_code == 1
    (error,) = summary["errors"]
    assert error["line"] == 3 and error["error"].startswith(f"{data}:3: not valid JSON: ")
    assert summary["summary"]["hallucination"]["errors"] == 1 and summary["summary"]["hallucination"]["count"] == 3
    with SQLiteStore(store) as saved:
        (stored,) = saved.query(run="r", errors=True)
    assert stored.error_stage == "item" and stored.item_id == "#3"


def test_a_byte_order_mark_is_read_as_if_absent(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = tmp_path / "data.jsonl"
    data.write_bytes(b"\xef\xbb\xbf" + (line("WRONG") + "\n" + line("ok") + "\n").encode())

    result = run_evals(data, [create_hallucination_scorer()])

    assert result.counts.items == 2 and not result.errors
    assert outputs_judged(judge) == ["WRONG", "ok"] or sorted(outputs_judged(judge)) == ["WRONG", "ok"]


def test_bytes_that_are_not_utf8_name_the_file_and_line(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = tmp_path / "data.jsonl"
    data.write_bytes((line("ok") + "\n").encode() + '{"output": "caf\xe9"}\n'.encode("latin-1") + (line("WRONG") + "\n").encode())

    result = run_evals(data, [create_hallucination_scorer()])

    (error,) = result.errors
    assert error.line == 2 and error.error.startswith(f"{data}:2: not UTF-8 text (byte 0xe9 at column 16)")
    assert result.counts.outcomes == {"scored": 2, "error": 1, "not_scorable": 0}


def test_an_output_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    reply = tmp_path / "reply.txt"
    reply.write_bytes("first line\ncaf\xe9".encode("latin-1"))

    result = runner.invoke(app, ["preview", "hallucination", "--output", f"@{reply}", "--context", "c"])

    assert result.exit_code == 2  # a file that cannot be used is a usage error, like a missing one
    assert result.stderr == f"error: {reply}: not UTF-8 text: byte 0xe9 at offset 14 (line 2); save the file as UTF-8\n"


@pytest.mark.parametrize("first, second", [(1, "1"), ("a", "a")])
def test_two_items_with_the_same_id_are_refused_before_any_judge_call(judge: JudgeServer, tmp_path: Path, first: object, second: object) -> None:
    script_hallucination(judge)
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join([line("ok", id=first), line("ok", id="other"), line("WRONG", id=second)]) + "\n", encoding="utf-8")

    with pytest.raises(DataError, match=rf"{data}: lines 1 and 3 have the same id '{first}'"):
        run_evals(data, [create_hallucination_scorer()], store=tmp_path / "r.sqlite")
    with pytest.raises(DataError, match="items 1 and 2 have the same id"):
        run_evals([{"id": first, "output": "a"}, {"id": second, "output": "b"}], [create_hallucination_scorer()])
    assert judge.requests == []


def test_duplicate_ids_in_a_stream_are_item_errors(judge: JudgeServer) -> None:
    """(With keep_results=False a stream is scored in flat memory, and this check is off.)"""
    script_hallucination(judge)
    stream = iter([{"id": 1, "output": "ok", "context": ["c"]}, {"id": "1", "output": "WRONG", "context": ["c"]}])

    result = run_evals(stream, [create_hallucination_scorer()])

    assert [error.line for error in result.errors] == [2] and "items 1 and 2 have the same id '1'" in result.errors[0].error


@pytest.mark.parametrize("content", ['{"foo": "bar"}', "[1, 2, 3]", '[{"content": "no role"}]'])
def test_an_output_file_that_is_not_a_transcript_is_refused(judge: JudgeServer, tmp_path: Path, content: str) -> None:
    script_hallucination(judge)
    reply = tmp_path / "reply.json"
    reply.write_text(content, encoding="utf-8")

    result = runner.invoke(app, ["run", "hallucination", "--output", f"@{reply}", "--context", "c"])

    assert result.exit_code == 2  # a file that cannot be used is a usage error, like a missing one
    assert result.stderr.startswith(f"error: {reply}: not a chat transcript: expected a list of messages with a `role`")
    assert judge.requests == []


def test_python_callers_get_the_same_refusal(judge: JudgeServer) -> None:
    with pytest.raises(RunInputError, match="the output is not a chat transcript"):
        create_hallucination_scorer(options={"context": ["c"]}).run(output={"foo": "bar"})
    assert judge.requests == []


@pytest.mark.parametrize("source", ["upper", "stdin"])
def test_a_transcript_through_stdin_or_an_upper_case_suffix_is_recognised(judge: JudgeServer, tmp_path: Path, source: str) -> None:
    script_hallucination(judge)
    transcript = json.dumps([{"role": "user", "content": "When?"}, {"role": "assistant", "content": "In 2007. WRONG"}])
    if source == "upper":
        (tmp_path / "REPLY.JSON").write_text(transcript, encoding="utf-8")
        result = runner.invoke(app, ["run", "hallucination", "--output", f"@{tmp_path / 'REPLY.JSON'}", "--context", "c"])
    else:
        result = runner.invoke(app, ["run", "hallucination", "--output", "@-", "--context", "c"], input=transcript)

    assert result.exit_code == 0, result.output
    assert outputs_judged(judge) == ["In 2007. WRONG"]


def test_a_text_option_keeps_the_text_given(judge: JudgeServer) -> None:
    script_hallucination(judge)
    verdicts = '{"verdicts": [{"statement": "a", "verdict": "no", "reason": "r"}]}'
    answers = ["--answer", 'preprocess={"claims": ["a"]}', "--answer", f"analyze={verdicts}"]
    shown = runner.invoke(app, ["preview", "hallucination", "--output", "x", "--context", "c", "--option", "language=no", *answers])
    assert shown.exit_code == 0, shown.output
    assert "Write the explanation in this language: no" in shown.stdout


@pytest.mark.parametrize("arguments", [["--scale", "inf"], ["--option", "scale=.nan"], ["--option", "scale=.inf"]])
def test_non_finite_numbers_are_refused_before_any_call(judge: JudgeServer, arguments: list[str]) -> None:
    result = runner.invoke(app, ["run", "hallucination", "--output", "x", "--context", "c", *arguments])
    assert result.exit_code == 2 and "finite" in result.stderr
    assert judge.requests == []


def test_non_finite_numbers_in_data_are_refused(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = tmp_path / "data.jsonl"
    data.write_text(line("ok") + "\n" + '{"output": "ok", "context": ["c"], "expected": {"hallucination": NaN}}\n', encoding="utf-8")

    result = run_evals(data, [create_hallucination_scorer()])

    (error,) = result.errors
    assert error.line == 2 and "NaN is not a number JSON allows" in error.error


def test_a_huge_output_is_refused_by_default_and_never_sent(judge: JudgeServer) -> None:
    script_hallucination(judge)
    huge = "word " * 1_000_000  # 5 MB
    with pytest.raises(RunInputError, match=r"the output is 5,000,000 characters, over max_input_chars \(100,000\)"):
        create_hallucination_scorer(options={"context": ["c"]}).run(output=huge)
    assert judge.requests == []


def test_a_huge_output_is_truncated_with_a_warning_when_the_scorer_says_so(judge: JudgeServer, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    script_hallucination(judge)
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text(
        "scorers:\n  long:\n    extends: hallucination\n    name: Long\n    judge:\n      max_input_chars: 1000\n      long_input: truncate\n",
        encoding="utf-8",
    )
    with caplog.at_level(logging.WARNING, logger="engine"):
        load_scorers(catalog).create("long", options={"context": ["c"]}).run(output="word " * 1_000_000)
    assert "the output is 5,000,000 characters; only the first 1,000 are judged" in caplog.text
    assert max(len(request.prompt) for request in judge.requests) < 10_000
    with pytest.raises(RunInputError, match=r"over max_input_chars \(10\)"):
        create_hallucination_scorer(options={"context": ["c"]}, judge=JudgeSettings(max_input_chars=10)).run(output="a longer output")


@pytest.mark.parametrize("kind", ["text file", "folder", "other database"])
def test_a_store_that_is_not_a_results_database_is_one_line(tmp_path: Path, kind: str) -> None:
    store = tmp_path / "store.sqlite"
    if kind == "text file":
        store.write_text("not a database at all " * 100, encoding="utf-8")
    elif kind == "folder":
        store.mkdir()
    else:
        import sqlite3

        with sqlite3.connect(store) as other:
            other.execute("CREATE TABLE invoices (id INTEGER)")

    result = runner.invoke(app, ["results", "--store", str(store)])

    assert result.exit_code == 2
    (message,) = result.stderr.strip().splitlines()
    assert str(store) in message and ("not a results" in message or "is a folder" in message)
    with pytest.raises(ConfigError, match=str(store)):
        SQLiteStore(store)

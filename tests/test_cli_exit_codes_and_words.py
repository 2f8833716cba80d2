"""The command line speaks in flags and follows one table of exit statuses: errors carry the
argument they are about (the CLI names its flag, Python its keyword), whether an error stops a
run is a property of its kind, `--option` is read through the scorer's option schema by every
command, and a data file that cannot be used is a usage error named in one line."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest
from helpers.catalogs import copy_catalog
from helpers.scripted import script_hallucination
from typer.testing import CliRunner

from engine import (
    ConfigError,
    JudgeAuthenticationError,
    JudgeCircuitOpenError,
    JudgeError,
    JudgeModelNotFoundError,
    JudgeServerError,
    JudgeTimeoutError,
)
from engine.cli import app
from engine.cli.app import EXIT_STATUSES
from engine.cli.common import one_line
from engine.judge.settings import resolve_judge
from engine.testing import JudgeServer, assert_score

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def items(path: Path, *rows: dict[str, object]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def one_error_line(result: object) -> str:
    lines = [line for line in result.stderr.splitlines() if line.startswith(("error:", "not scorable:"))]  # type: ignore[attr-defined]
    assert len(lines) == 1, result.stderr  # type: ignore[attr-defined]
    return lines[0]


def test_the_readme_table_and_every_help_give_the_same_exit_statuses() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = dict(re.findall(r"^\| (\d+) \| (.+?) \|$", readme, re.MULTILINE))
    assert {int(status): meaning for status, meaning in table.items()} == dict(EXIT_STATUSES)
    for command in (["--help"], ["eval", "--help"], ["run", "--help"], ["list", "--help"]):
        shown = " ".join(runner.invoke(app, command).stdout.split())
        assert "130 interrupted by Ctrl-C or SIGTERM" in shown and "2 usage:" in shown, command


def test_show_works_for_a_computed_scorer_and_shows_no_judge() -> None:
    shown = runner.invoke(app, ["show", "keyword-coverage"])
    assert shown.exit_code == 0, shown.output
    assert "judge: none" in shown.stdout and "gpt-4o-mini" not in shown.stdout
    assert "keywords" in shown.stdout and "compute" in shown.stdout  # its steps, whatever their kind


def test_a_computed_scorer_without_expected_tools_says_what_to_give_in_one_line() -> None:
    result = runner.invoke(app, ["run", "tool-call-accuracy-computed", "--output", "Done."])
    assert result.exit_code == 2
    line = one_error_line(result)
    assert line.startswith("not scorable: tool-call-accuracy-computed: no expected tool calls") and "give --expected-trajectory" in line
    assert "trajectory_match(" not in line and "failed:" not in line


def test_language_no_is_text_in_every_command(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = items(tmp_path / "d.jsonl", *({"id": f"i{n}", "output": "ok. WRONG" if n % 2 else "ok", "context": ["c"], "expected": bool(n % 2)} for n in range(4)))
    store = ["--store", str(tmp_path / "r.sqlite")]
    variants = copy_catalog(tmp_path, "first", "second")
    for command in (
        ["eval", str(data), "--scorer", "hallucination", "--option", "language=no", *store],
        ["calibrate", str(data), "--scorer", "hallucination", "--option", "language=no", *store],
        ["compare", str(data), "--scorer", "first", "--scorer", "second", "--config", str(variants), "--option", "language=no", *store],
    ):
        result = runner.invoke(app, command)
        assert "valid string" not in result.output and "got False" not in result.output, command
        assert result.exit_code in (0, 1), (command, result.output)  # 1 only for a threshold of the data
    reasons = [request.prompt for request in judge.requests_for("Reason")]
    assert reasons and all("Write the explanation in this language: no " in prompt for prompt in reasons)


def test_null_only_for_an_option_that_may_be_null() -> None:
    refused = runner.invoke(app, ["run", "keyword-coverage", "--output", "x", "--input", "y", "--option", "language=null"])
    assert refused.exit_code == 2
    assert one_error_line(refused) == 'error: --option language=null: language cannot be null; give a value or leave the option out (its default is "en")'
    typo = runner.invoke(app, ["run", "keyword-coverage", "--output", "x", "--input", "y", "--option", "langage=de"])
    assert typo.exit_code == 2 and "--option langage: unknown option (did you mean 'language'?)" in typo.stderr
    wrong_type = runner.invoke(app, ["run", "keyword-coverage", "--output", "x", "--input", "y", "--option", "stem=maybe"])
    assert wrong_type.exit_code == 2 and one_error_line(wrong_type).startswith("error: --option stem=maybe: expected a valid boolean")


def test_unusable_data_files_are_usage_errors_named_in_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    utf16 = tmp_path / "utf16.jsonl"
    utf16.write_bytes('{"id": "a", "output": "x"}\n'.encode("utf-16"))
    duplicate = items(tmp_path / "dup.jsonl", {"id": "a", "output": "x"}, {"id": "a", "output": "y"})
    expected = {
        empty: f"error: {empty}: the file is empty: no items to score (one JSON object per line)",
        utf16: f"error: {utf16}: the file is UTF-16 text; save it as UTF-8",
        duplicate: f"error: {duplicate}: lines 1 and 2 have the same id 'a'",
    }
    for data, line in expected.items():
        result = runner.invoke(app, ["eval", str(data), "--scorer", "includes", "--option", "texts=[x]", "--store", str(tmp_path / "r.sqlite")])
        assert result.exit_code == 2, result.output
        assert one_error_line(result).startswith(line)
    reply = runner.invoke(app, ["run", "includes", "--option", "texts=[x]", "--output", f"@{utf16}"])
    assert reply.exit_code == 2 and one_error_line(reply) == f"error: {utf16}: the file is UTF-16 text; save it as UTF-8"


def test_a_label_for_no_scorer_is_refused_with_a_did_you_mean(judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    data = items(tmp_path / "d.jsonl", {"id": "a", "output": "ok", "context": ["c"], "expected": {"halucination": True}})
    result = runner.invoke(app, ["eval", str(data), "--scorer", "hallucination", "--store", str(tmp_path / "r.sqlite")])
    assert result.exit_code == 2
    assert one_error_line(result) == (
        f"error: {data}:1: `expected` has a label for 'halucination', which is no scorer (did you mean 'hallucination'?) (this run's: hallucination)"
    )
    assert judge.requests == []


def test_preview_refuses_an_answer_for_no_step_and_a_bad_answer_in_plain_words() -> None:
    base = ["preview", "hallucination", "--output", "x", "--context", "c"]
    unknown = runner.invoke(app, [*base, "--answer", 'preproces={"claims": []}'])
    assert unknown.exit_code == 2
    assert "--answer preproces: hallucination has no step 'preproces' that asks a judge (did you mean 'preprocess'?)" in unknown.stderr
    not_an_object = runner.invoke(app, [*base, "--answer", "preprocess=nonsense"])
    assert not_an_object.exit_code == 2
    assert one_error_line(not_an_object) == "error: the answer given for step 'preprocess' must be an object with the fields claims, e.g. '{...}'; got 'nonsense'"


def test_flags_not_python_words(judge: JudgeServer, tmp_path: Path) -> None:
    bad_metadata = runner.invoke(app, ["run", "hallucination", "--output", "x", "--context", "c", "--metadata", "{a: [1"])
    assert bad_metadata.exit_code == 2 and one_error_line(bad_metadata).startswith("error: --metadata: not JSON or YAML: expected ',' or ']'")
    data = items(tmp_path / "d.jsonl", {"id": "a", "output": "x"})
    budget = runner.invoke(app, ["eval", str(data), "--scorer", "includes", "--option", "texts=[x]", "--max-errors", "lots"])
    assert budget.exit_code == 2 and "max_errors" not in budget.stderr and one_error_line(budget).endswith("(--max-errors)")


def test_an_unreachable_ollama_judge_names_its_own_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("OLLAMA_BASE_URL", f"http://127.0.0.1:{port}/v1")
    result = runner.invoke(app, ["run", "hallucination", "--model", "ollama/llama3.1", "--output", "x", "--context", "c", "--retries", "0"])
    assert result.exit_code == 2
    line = one_error_line(result)
    assert "OLLAMA_BASE_URL" in line and "OPENAI_BASE_URL" not in line and line.endswith("(or --base-url)")


def test_errors_carry_their_parameter_and_stop_a_run_by_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError) as no_model:
        resolve_judge(None, owner="my-scorer")
    assert no_model.value.parameter == "model" and str(no_model.value) == "my-scorer: no judge model; set SCORERS_MODEL (or pass model='provider/model')"
    assert one_line(no_model.value) == "my-scorer: no judge model; set SCORERS_MODEL (or give --model provider/model)"
    assert [kind("x").fatal for kind in (JudgeError, JudgeServerError, JudgeTimeoutError)] == [False, False, False]
    assert [kind("x").fatal for kind in (JudgeAuthenticationError, JudgeModelNotFoundError, JudgeCircuitOpenError)] == [True, True, True]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError) as no_key:
        assert_score("x", scorer="hallucination", context=["c"], below=0.5)
    assert "api_key" not in str(no_key.value) and "OPENAI_API_KEY" in str(no_key.value)

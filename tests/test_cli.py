"""The `scorers` command as a user types it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.cli import app
from engine.testing import JudgeServer, Reply

runner = CliRunner()


def script(judge: JudgeServer) -> None:
    judge.on("Claims", {"claims": ["The first iPhone was announced in 2007.", "It cost $10."]})
    judge.on("HallucinationVerdicts", {"verdicts": [
        {"statement": "The first iPhone was announced in 2007.", "verdict": "no", "reason": "r"}, {"statement": "It cost $10.", "verdict": "yes", "reason": "r"},
    ]})
    judge.on("Reason", {"reason": "The price is not in the context."})


def test_list_shows_the_catalog() -> None:
    result = runner.invoke(app, ["list", "--json"])
    assert result.exit_code == 0
    rows = {row["id"]: row for row in json.loads(result.stdout)}
    assert rows["hallucination"]["direction"] == "lower_is_better"
    assert rows["hallucination"]["requires"] == ["output", "context"]
    table = runner.invoke(app, ["list"])
    assert "hallucination" in table.stdout and "lower" in table.stdout


def test_run_prints_score_and_reason(judge: JudgeServer) -> None:
    script(judge)
    result = runner.invoke(app, ["run", "hallucination", "--output", "The iPhone was announced in 2007 and cost $10.", "--context", "The first iPhone was announced on January 9, 2007."])
    assert result.exit_code == 0, result.output
    assert "hallucination: 0.5 (lower is better)" in result.stdout
    assert "The price is not in the context." in result.stdout


def test_run_json_prints_the_whole_result(judge: JudgeServer, tmp_path: Path) -> None:
    script(judge)
    output_file = tmp_path / "answer.txt"
    output_file.write_text("From a file.", encoding="utf-8")
    result = runner.invoke(app, ["run", "hallucination", "--output", f"@{output_file}", "--context", "ctx", "--scale", "10", "--model", "openai/local", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["score"] == 5
    assert "From a file." in data["preprocess_prompt"]
    assert set(data) >= {"run_id", "preprocess_step_result", "analyze_step_result", "analyze_prompt", "generate_reason_prompt", "reason"}
    assert judge.requests[0].body["model"] == "local"


def test_run_reads_a_transcript_file_as_messages(judge: JudgeServer, tmp_path: Path) -> None:
    script(judge)
    transcript = tmp_path / "run.json"
    transcript.write_text(json.dumps([{"role": "user", "content": "Q?"}, {"role": "assistant", "content": "Assistant says this."}]))
    result = runner.invoke(app, ["run", "hallucination", "--output", f"@{transcript}", "--context", "c", "--json"])
    assert result.exit_code == 0, result.output
    assert "Assistant says this." in json.loads(result.stdout)["preprocess_prompt"]


def test_options_are_passed_by_name(judge: JudgeServer) -> None:
    script(judge)
    result = runner.invoke(app, ["run", "hallucination", "--output", "x", "--context", "c", "--option", "language=ko", "--json"])
    assert result.exit_code == 0, result.output
    assert "language: ko" in json.loads(result.stdout)["generate_reason_prompt"]


@pytest.mark.parametrize(
    ("arguments", "message", "code"),
    [
        (["run", "nope", "--output", "x"], "error: unknown scorer 'nope'; known scorers: hallucination", 2),
        (["run", "hallucination", "--output", "x", "--context", "c", "--scale", "0"], "error: hallucination: option scale: Input should be greater than 0", 2),
        (["run", "hallucination", "--output", "@/no/such/file", "--context", "c"], "error: cannot read /no/such/file", 2),
        (["run", "hallucination", "--output", "x", "--context", "c", "--option", "oops"], "error: --option 'oops': expected NAME=VALUE", 2),
    ],
)
def test_bad_input_ends_in_one_line(judge: JudgeServer, arguments: list[str], message: str, code: int) -> None:
    result = runner.invoke(app, arguments)
    assert result.exit_code == code
    assert result.stderr.startswith(message)
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output


def test_judge_errors_end_in_one_line_and_non_zero_exit(judge: JudgeServer) -> None:
    judge.on("Claims", Reply.fail(500, "the model fell over", headers={"retry-after": "0"}))
    result = runner.invoke(app, ["run", "hallucination", "--output", "x", "--context", "c"])
    assert result.exit_code == 1
    assert result.stderr == f"error: step 'preprocess': the judge at {judge.base_url} answered HTTP 500: the model fell over\n"


def test_missing_key_says_how_to_set_it() -> None:
    result = runner.invoke(app, ["run", "hallucination", "--output", "x", "--context", "c"])
    assert result.exit_code == 2
    assert "set OPENAI_API_KEY" in result.stderr and "OPENAI_BASE_URL" in result.stderr


def test_config_points_at_a_host_catalog(tmp_path: Path) -> None:
    (tmp_path / "catalog.yaml").write_text("scorers:\n  my-hallucination:\n    extends: hallucination\n    name: Mine\n")
    result = runner.invoke(app, ["list", "--config", str(tmp_path / "catalog.yaml"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["name"] == "Mine"


SCORERS = shutil.which("scorers", path=str(Path(sys.executable).parent)) or shutil.which("scorers")


@pytest.mark.skipif(SCORERS is None, reason="the package's console script is not installed")
def test_the_installed_command_runs_without_a_traceback(judge: JudgeServer) -> None:
    judge.on("Claims", Reply.fail(404, "model 'nope' not found"))
    env = {**os.environ, "OPENAI_BASE_URL": judge.base_url, "OPENAI_API_KEY": "sk-secret-in-env"}
    done = subprocess.run([str(SCORERS), "run", "hallucination", "--output", "x", "--context", "c", "--model", "openai/nope"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2  # a model the server does not serve is a configuration error
    assert done.stderr == f"error: step 'preprocess': the judge at {judge.base_url} answered HTTP 404: model 'nope' not found (is 'nope' a model this server serves?)\n"
    assert "sk-secret-in-env" not in done.stdout + done.stderr


def test_preview_shows_the_exact_prompts_without_a_judge() -> None:
    first = runner.invoke(app, ["preview", "hallucination", "--output", "The iPhone cost $10 in 2007.", "--context", "It was announced in 2007."])
    assert first.exit_code == 0, first.output
    assert "<output>\nThe iPhone cost $10 in 2007.\n</output>" in first.stdout
    assert "give its answer: --answer preprocess='{...}' (fields: claims)" in first.stdout

    claims = '{"claims": ["The iPhone cost $10.", "It came out in 2007."]}'
    verdicts = '{"verdicts": [{"statement": "The iPhone cost $10.", "verdict": "Yes", "reason": "r"}, {"statement": "It came out in 2007.", "verdict": "no", "reason": "r"}]}'
    answers = ["--answer", f"preprocess={claims}", "--answer", f"analyze={verdicts}", "--answer", "generate_reason={reason: Price unsupported.}"]
    full = runner.invoke(app, ["preview", "hallucination", "--output", "The iPhone cost $10. It came out in 2007.", "--context", "c", *answers, "--option", "scale=10"])
    assert full.exit_code == 0, full.output
    assert '1. "The iPhone cost $10."\n2. "It came out in 2007."' in full.stdout
    assert "The score is 5 on a scale from 0 to 10" in full.stdout
    assert full.stdout.rstrip().endswith("score: 5\nreason: Price unsupported.")


def test_preview_refuses_an_answer_the_judge_could_not_give() -> None:
    result = runner.invoke(app, ["preview", "hallucination", "--output", "x", "--context", "c", "--answer", 'preprocess={"claims": ["a", "b"]}', "--answer", 'analyze={"verdicts": []}'])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: the answer given for step 'analyze' would be refused: There are 2 claims but 0 verdicts")


def test_output_is_only_asked_of_scorers_that_judge_one() -> None:
    missing = runner.invoke(app, ["preview", "hallucination", "--context", "c"])
    # A run the scorer cannot judge says so (not scorable, with the reason), with the exit
    # status of a missing file: the value is the user's to give.
    assert missing.exit_code == 2 and missing.stderr.startswith("not scorable: hallucination needs `output` for every run: give --output")
    context_only = runner.invoke(app, ["preview", "context-precision", "--input", "Who wrote Hamlet?", "--context", "Shakespeare wrote Hamlet.", "--ground-truth", "Shakespeare"])
    assert context_only.exit_code == 0, context_only.output
    assert "<context_1>\nShakespeare wrote Hamlet.\n</context_1>" in context_only.stdout

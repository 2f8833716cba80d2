"""The command line a person expects: version, completion, help without placeholders after
flags, an 80-column list, one scorer shown in full, errors in flags, did-you-mean, a new
scorer from `scorers init`, and the judge providers with their variables."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine import load_scorers
from engine.cli import app
from engine.scoring.preview import preview
from engine.testing import JudgeServer

runner = CliRunner()


def test_version_and_completion() -> None:
    shown = runner.invoke(app, ["--version"])
    assert shown.exit_code == 0 and re.fullmatch(r"llm-scorers \S+\n", shown.stdout)
    root = runner.invoke(app, ["--help"]).stdout
    assert "--install-completion" in root and "--show-completion" in root


@pytest.mark.parametrize("command", ["run", "eval", "list", "preview", "results", "judges", "show", "init", "cache", "cache stats", "cache clear"])
def test_flags_show_no_value_placeholder_and_values_no_python_types(command: str) -> None:
    shown = runner.invoke(app, [*command.split(), "--help"]).stdout
    for line in shown.splitlines():
        if "--json" in line or "--help" in line or "--long" in line:
            assert "<" not in line and "TEXT" not in line, line
        assert "list[str]" not in line and "<str>" not in line.split("│")[1 if "--" in line and "│" in line else 0], line


def test_list_fits_80_columns_and_long_has_the_rest() -> None:
    short = runner.invoke(app, ["list"], env={"COLUMNS": "80"}).stdout
    lines = short.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    assert re.search(r"^hallucination\s+lower\s+Share of the output's claims", short, re.MULTILINE)
    long = runner.invoke(app, ["list", "--long"]).stdout
    assert "needs" in long and "Hallucination" in long


def test_show_prints_definition_steps_options_and_files() -> None:
    shown = runner.invoke(app, ["show", "hallucination"])
    assert shown.exit_code == 0, shown.output
    out = shown.stdout
    assert "hallucination: Hallucination (lower is better)" in out
    assert "preprocess" in out and "analyze" in out and "scale" in out
    assert re.search(r"definition: .*scorers.yaml:\d+", out)
    assert re.search(r"analyze schema: .*hallucination_verdicts.yaml", out)
    assert re.search(r"preprocess template: .*\.j2", out)


def test_misspellings_get_a_did_you_mean() -> None:
    command = runner.invoke(app, ["lst"])
    assert command.exit_code == 2 and "did you mean 'list'?" in command.output
    scorer = runner.invoke(app, ["show", "halucination"])
    assert scorer.exit_code == 2 and "did you mean 'hallucination'?" in scorer.output


def test_errors_name_flags_not_python_keywords(judge: JudgeServer) -> None:
    missing_context = runner.invoke(app, ["run", "hallucination", "--output", "x"])
    assert "give --context" in missing_context.output and "options=" not in missing_context.output
    missing_input = runner.invoke(app, ["run", "answer-relevancy", "--output", "x"])
    assert "give --input" in missing_input.output and "in Python" not in missing_input.output
    unknown_option = runner.invoke(app, ["run", "hallucination", "--output", "x", "--context", "c", "--option", "colour=red"])
    assert "--option colour: unknown option" in unknown_option.output


def test_no_key_error_names_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = runner.invoke(app, ["run", "hallucination", "--output", "x", "--context", "c"])
    assert shown.exit_code == 2
    assert "(or --base-url)" in shown.output and "openai/<model>" in shown.output
    assert "api_key=" not in shown.output and "base_url=" not in shown.output


def test_init_writes_a_scorer_that_loads_previews_and_runs(judge: JudgeServer, tmp_path: Path) -> None:
    folder = tmp_path / "catalog"
    made = runner.invoke(app, ["init", "my-scorer", "--dir", str(folder)])
    assert made.exit_code == 0, made.output
    catalog = load_scorers(folder / "scorers.yaml")
    shown = preview(catalog.plan("my-scorer"), "Hello, the answer is 4.")
    assert "Hello, the answer is 4." in shown.prompts[0].prompt
    judge.on("MyScorerVerdict", {"evaluation": "Direct and polite.", "rating": 8})
    judge.on("Reason", {"reason": "It answers politely."})
    result = catalog.create("my-scorer").run(output="Hello, the answer is 4.")
    assert result.score == 0.8 and result.reason == "It answers politely."
    # A second scorer goes into the same catalog; the same id again is refused.
    assert runner.invoke(app, ["init", "other_scorer", "--dir", str(folder)]).exit_code == 0
    assert set(load_scorers(folder / "scorers.yaml").ids()) >= {"my-scorer", "other_scorer"}
    again = runner.invoke(app, ["init", "my-scorer", "--dir", str(folder)])
    assert again.exit_code == 2 and "exists already" in again.output


def test_init_refuses_a_bad_id(tmp_path: Path) -> None:
    shown = runner.invoke(app, ["init", "My Scorer", "--dir", str(tmp_path)])
    assert shown.exit_code == 2 and "scorer id 'My Scorer'" in shown.output


def test_judges_lists_providers_and_which_variables_are_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "gsk-very-secret")
    shown = runner.invoke(app, ["judges"], env={"COLUMNS": "120"})
    assert shown.exit_code == 0, shown.output
    for provider in ("openai", "anthropic", "azure", "gemini", "openrouter", "groq", "together", "deepseek", "mistral", "fireworks", "vllm", "lmstudio", "llamacpp", "ollama"):
        assert re.search(rf"^│ {provider}\s", shown.stdout, re.MULTILINE), provider
    assert "GROQ_API_KEY ✓" in shown.stdout and "GEMINI_API_KEY -" in shown.stdout
    assert "gsk-very-secret" not in shown.stdout
    as_json = runner.invoke(app, ["judges", "--json"]).stdout
    assert '"GROQ_API_KEY": true' in as_json and "gsk-very-secret" not in as_json


def test_judges_includes_a_catalogs_presets(tmp_path: Path) -> None:
    catalog = tmp_path / "scorers.yaml"
    catalog.write_text("providers:\n  corp:\n    base_url: http://gateway.internal/v1\n    api_key_env: CORP_KEY\nscorers: {}\n", encoding="utf-8")
    shown = runner.invoke(app, ["judges", "--config", str(catalog)], env={"COLUMNS": "120"})
    assert "corp" in shown.stdout and "CORP_KEY -" in shown.stdout and "http://gateway.internal/v1" in shown.stdout


def test_the_shell_completes_commands_and_scorer_ids() -> None:
    import os
    import subprocess
    import sys

    command = Path(sys.executable).parent / "scorers"

    def complete(words: str, index: int) -> list[str]:
        env = {**os.environ, "_SCORERS_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(index)}
        return subprocess.run([str(command)], env=env, capture_output=True, text=True, check=False).stdout.split()

    assert complete("scorers sh", 1) == ["show"]
    assert complete("scorers show hal", 2) == ["hallucination"]
    assert "context-precision" in complete("scorers run context-", 2)


def test_text_shaped_like_an_emoji_code_is_shown_as_written(tmp_path: Path) -> None:
    catalog = tmp_path / "scorers.yaml"
    catalog.write_text(
        "scorers:\n  short-reply:\n    name: 'Short reply :warning:'\n    description: '1 when the reply is short :thumbs_up:'\n"
        "    direction: higher_is_better\n    steps:\n      - id: score\n        kind: score\n"
        '        score: "1 if (output | length) < 80 else 0"\n',
        encoding="utf-8",
    )
    for command in (["list", "--config", str(catalog)], ["list", "--long", "--config", str(catalog)], ["show", "short-reply", "--config", str(catalog)]):
        shown = runner.invoke(app, command, env={"COLUMNS": "200"})
        assert shown.exit_code == 0, shown.output
        assert ":thumbs_up:" in shown.stdout and "👍" not in shown.stdout, shown.stdout

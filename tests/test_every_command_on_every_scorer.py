"""Every command works on every scorer: for each scorer of the built-in catalog (found by
listing it, so a new scorer is covered without editing this file), of the skeleton that
`scorers init` writes and of the examples under docs/examples/, `show`, `preview`, `run`
against the scripted judge, `eval` of a small file and the Python `create_scorer(...).run()`
each succeed with inputs that fit what the scorer requires, and what they print never reads
as a crash: no `unexpected error`, no traceback, no internal class or expression."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.scripted import answer_fitting, fitting
from typer.testing import CliRunner

from engine import Catalog, builtin_catalog, load_scorers
from engine.cli import app
from engine.testing import JudgeServer

# About a second a scorer, a minute in all.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()

#: One value for each run field a scorer may require (`requires` in its YAML).
#: The output is an agent's transcript with one tool call, so that scorers of tool calls have
#: one to judge; the others read its text.
FIELDS: dict[str, Any] = {
    "output": [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"q": "capital of France"}'}},
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "Paris is the capital of France."},
        {"role": "assistant", "content": "The capital of France is Paris."},
    ],
    "input": "What is the capital of France?",
    "context": ["Paris is the capital and largest city of France."],
    "ground_truth": "Paris",
    "expected_trajectory": ["search"],
    "turns": [{"role": "user", "content": "What is the capital of France?"}, {"role": "assistant", "content": "Paris."}],
}

#: What a crash or a leak of the engine's insides looks like in a message.
CRASH = re.compile(
    r"unexpected error|an internal error|Traceback|\b[A-Z]\w*(Error|Exception)\b|Input should be|' failed: |\{\{|\{%|KeyError|NoneType",
)


#: Options whose rules ask more than their schema says (a classifier needs two labels).
OPTIONS: dict[str, dict[str, Any]] = {
    "classifier": {"labels": [{"label": "Paris", "score": 1}, {"label": "other", "score": 0}]},
}


def required_options(catalog: Catalog, scorer_id: str) -> dict[str, Any]:
    """A value for each option the scorer cannot do without: those without a default, and
    those its option rules demand (such as the texts `includes` looks for)."""
    plan = catalog.plan(scorer_id)
    demanded = {name for rule in plan.option_rules for name in re.findall(r"options\.(\w+)", rule.check.source)}
    schemas = catalog.definition(scorer_id).options
    fitting_options = {
        name: fitting(schemas[name], {}, at_least=1)
        for name, field in plan.options_model.model_fields.items()
        if field.is_required() or (field.default is None and name in demanded)
    }
    return {**fitting_options, **OPTIONS.get(scorer_id, {})}


def given_fields(catalog: Catalog, scorer_id: str) -> dict[str, Any]:
    """The run fields the scorer requires, and the expected tool calls, which scorers of
    tool calls read when their options name none."""
    requires = catalog.plan(scorer_id).requires
    return {field: value for field, value in FIELDS.items() if field in requires or field == "expected_trajectory"}


def field_flags(catalog: Catalog, scorer_id: str, tmp_path: Path) -> list[str]:
    """The same fields as command-line flags (a transcript as @file.json)."""
    given: list[str] = []
    for field, value in given_fields(catalog, scorer_id).items():
        flag = f"--{field.replace('_', '-')}"
        if field == "context":
            given += [part for piece in value for part in (flag, piece)]
        elif field in ("output", "turns"):
            transcript = tmp_path / f"{field}.json"
            transcript.write_text(json.dumps(value), encoding="utf-8")
            given += [flag, f"@{transcript}"]
        else:
            given += [flag, value if isinstance(value, str) else json.dumps(value)]
    return given


def option_flags(catalog: Catalog, scorer_id: str) -> list[str]:
    """`--option` flags for the options the scorer cannot do without."""
    given: list[str] = []
    for name, value in required_options(catalog, scorer_id).items():
        given += ["--option", f"{name}={value if isinstance(value, str) else json.dumps(value)}"]
    return given


def item(catalog: Catalog, scorer_id: str) -> dict[str, Any]:
    return {"id": "one", **given_fields(catalog, scorer_id)}


def assert_clean(result: Any, command: str) -> None:
    shown = result.output + (result.stderr if result.stderr_bytes is not None else "")
    assert result.exception is None or isinstance(result.exception, SystemExit), f"{command}: {result.exception!r}"
    assert not CRASH.search(shown), f"{command}:\n{shown}"
    assert result.exit_code == 0, f"{command} exited {result.exit_code}:\n{shown}"


def sweep(catalog: Catalog, scorer_id: str, config: list[str], tmp_path: Path, judge: JudgeServer) -> None:
    judge.fallback = answer_fitting
    options = option_flags(catalog, scorer_id)
    if getattr(catalog.definition(scorer_id), "pairwise", False):  # judges two outputs: `scorers pairwise`, not run or eval
        pairs = tmp_path / "pairs.jsonl"
        pairs.write_text(json.dumps({"id": "p1", **given_fields(catalog, scorer_id), "outputs": {"a": "Paris.", "b": "It is Paris."}}) + "\n", encoding="utf-8")
        given = field_flags(catalog, scorer_id, tmp_path) + options + ["--second-output", "It is Paris."]
        for command in (
            ["show", scorer_id],
            ["preview", scorer_id, *given],
            ["pairwise", str(pairs), "--scorer", scorer_id, "--store", str(tmp_path / "r.sqlite"), *options],
        ):
            assert_clean(runner.invoke(app, [*command, *config]), " ".join(command))
        return
    given = field_flags(catalog, scorer_id, tmp_path) + options
    for command in (["show", scorer_id], ["preview", scorer_id, *given], ["run", scorer_id, *given, "--model", "openai/scripted"]):
        assert_clean(runner.invoke(app, [*command, *config]), " ".join(command))

    data = tmp_path / "items.jsonl"
    data.write_text(json.dumps(item(catalog, scorer_id)) + "\n", encoding="utf-8")
    command = ["eval", str(data), "--scorer", scorer_id, "--store", str(tmp_path / "r.sqlite"), "--model", "openai/scripted", *options, *config]
    assert_clean(runner.invoke(app, command), " ".join(command))

    scorer = catalog.create(scorer_id, model="openai/scripted", options=required_options(catalog, scorer_id))
    result = scorer.run(**given_fields(catalog, scorer_id))
    assert result.score is not None and not CRASH.search(result.reason or ""), (scorer_id, result)


@pytest.mark.parametrize("scorer_id", builtin_catalog().ids())
def test_every_command_works_on_every_built_in_scorer(scorer_id: str, judge: JudgeServer, tmp_path: Path) -> None:
    sweep(builtin_catalog(), scorer_id, [], tmp_path, judge)


def test_every_command_works_on_the_init_skeleton(judge: JudgeServer, tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    assert runner.invoke(app, ["init", "my-scorer", "--dir", str(folder)]).exit_code == 0
    catalog = load_scorers(folder / "scorers.yaml")
    sweep(catalog, "my-scorer", ["--config", str(folder / "scorers.yaml")], tmp_path, judge)


EXAMPLES = sorted((ROOT / "docs" / "examples").glob("*/catalog.yaml"))


@pytest.mark.parametrize(
    ("catalog_file", "scorer_id"),
    [(path, scorer_id) for path in EXAMPLES for scorer_id in yaml.safe_load(path.read_text(encoding="utf-8"))["scorers"]],
    ids=lambda value: value.parent.name if isinstance(value, Path) else str(value),
)
def test_every_command_works_on_the_documented_examples(catalog_file: Path, scorer_id: str, judge: JudgeServer, tmp_path: Path) -> None:
    sweep(load_scorers(catalog_file), scorer_id, ["--config", str(catalog_file)], tmp_path, judge)

"""A step kind is a plug-in: a module outside the engine registers one, and a scorer written
in YAML uses it, with its load-time checks and its run, without any engine file changed."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import Field
from typer.testing import CliRunner

from engine import CatalogErrors, load_scorers
from engine.catalog import check_catalog
from engine.cli import app
from engine.scoring.plan import Evaluable, StepPlan
from engine.scoring.results import StepRecord
from engine.scoring.shapes import NUMBER, Shape
from engine.scoring.steps import StepBuilder, StepCall, StepKindBase, StepSpec, register_step_kind, unregister_step_kind


class CountStep(StepSpec):
    """Counts the matches of a regular expression in a text."""

    kind: Literal["count"]
    pattern: str = Field(description="A regular expression")
    text: str = Field(default="output", description="Expression of the text searched")
    on_skip: float | None = None


@dataclass(frozen=True, kw_only=True)
class CountPlan(StepPlan):
    kind: str = "count"
    pattern: re.Pattern[str]
    text: Evaluable
    on_skip: float | None = None


class CountKind(StepKindBase[CountStep, CountPlan]):
    name = "count"
    spec = CountStep

    def names(self, spec: CountStep) -> Mapping[str, Shape]:
        return {spec.id: NUMBER}

    def describe(self, spec: CountStep) -> str:
        return f"matches of {spec.pattern}"

    def compile(self, spec: CountStep, build: StepBuilder) -> CountPlan:
        try:
            pattern = re.compile(spec.pattern)
        except re.error as exc:
            build.problem(f"{build.label}.pattern: not a regular expression ({exc})", "pattern")
            pattern = re.compile("")
        text, _ = build.expression(spec.text, "text")
        return CountPlan(id=spec.id, pattern=pattern, text=text, on_skip=spec.on_skip, reads=build.names_read())

    async def run(self, plan: CountPlan, scope: Mapping[str, Any], call: StepCall) -> StepRecord:
        text = call.evaluate(plan.text, scope)
        return StepRecord(id=plan.id, kind=plan.kind, result=len(plan.pattern.findall(str(text or ""))))


@pytest.fixture
def count_kind() -> Iterator[None]:
    register_step_kind(CountKind())
    yield
    unregister_step_kind("count")


def catalog(tmp_path: Path, steps: str) -> Path:
    path = tmp_path / "catalog.yaml"
    path.write_text(
        textwrap.dedent("""\
            scorers:
              shouting:
                name: Shouting
                description: Share of sentences that end with an exclamation mark
                direction: lower_is_better
                empty_output: score
                steps:
            """)
        + textwrap.indent(textwrap.dedent(steps), " " * 6),
        encoding="utf-8",
    )
    return path


SHOUTING = """\
    - id: shouts
      kind: count
      pattern: "!"
    - id: sentences
      kind: count
      pattern: "[.!?]"
      skip_if: output | length == 0
      on_skip: 0
    - id: score
      kind: score
      score: "shouts / sentences if sentences else 0"
"""


def test_a_registered_kind_compiles_and_runs_from_yaml(tmp_path: Path, count_kind: None) -> None:
    scorers = load_scorers(catalog(tmp_path, SHOUTING))
    assert not scorers.plan("shouting").needs_judge
    result = scorers.create("shouting").run(output="Stop! Now! Please.")
    assert result.score == 0.67
    assert result.steps["shouts"].result == 2 and result.steps["shouts"].kind == "count"
    assert result.steps["sentences"].result == 3
    assert scorers.create("shouting").run(output="").steps["sentences"].skipped


def test_the_names_a_registered_kind_gives_are_checked_at_load(tmp_path: Path, count_kind: None) -> None:
    path = catalog(tmp_path, SHOUTING.replace("shouts / sentences", "shouts.total / sentences").replace('pattern: "!"', 'pattern: "!"\n      text: outptu'))
    with pytest.raises(CatalogErrors) as raised:
        load_scorers(path)
    messages = [problem.message for problem in raised.value.problems]
    assert any("unknown name 'outptu'; did you mean 'output'?" in message for message in messages), messages
    assert any("shouts is a number: it has no field 'total'" in message for message in messages), messages


def test_a_misspelt_key_of_a_registered_kind_is_named_with_its_keys(tmp_path: Path, count_kind: None) -> None:
    with pytest.raises(CatalogErrors) as raised:
        load_scorers(catalog(tmp_path, SHOUTING.replace('pattern: "!"', 'patern: "!"')))
    assert "unknown key 'patern'; did you mean 'pattern'?" in str(raised.value)


def test_without_the_registration_the_kind_is_unknown(tmp_path: Path) -> None:
    with pytest.raises(CatalogErrors) as raised:
        load_scorers(catalog(tmp_path, SHOUTING))
    assert "unknown step kind 'count'" in str(raised.value)


def test_show_describes_each_step_by_its_kind() -> None:
    # It used to fail with "unexpected error (KeyError)" on a scorer with a compute step.
    shown = CliRunner().invoke(app, ["show", "completeness"])
    assert shown.exit_code == 0, shown.output
    assert "input_terms, output_terms, covered, missing" in shown.output and "score = coverage * options.scale" in shown.output


def test_a_catalog_found_clean_with_a_kind_is_checked_again_without_it(tmp_path: Path) -> None:
    path = catalog(tmp_path, SHOUTING)
    register_step_kind(CountKind())
    try:
        problems, scorers = check_catalog(path)
        assert problems == [] and scorers > 1  # clean, and remembered so
        assert check_catalog(path) == ([], scorers)
    finally:
        unregister_step_kind("count")
    problems, _ = check_catalog(path)
    assert any("unknown step kind 'count'" in problem.message for problem in problems)

"""A step kind is a plug-in: a module outside the engine registers one, and a scorer written
in YAML uses it, with its load-time checks and its run, without any engine file changed."""

from __future__ import annotations

import json
import re
import textwrap
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
import yaml
from pydantic import Field
from typer.testing import CliRunner

from engine import CatalogErrors, load_scorers
from engine.catalog import check_catalog
from engine.cli import app
from engine.formatting import plain
from engine.judge import JudgeRequest
from engine.scoring.plan import Evaluable, Prompt, StepPlan
from engine.scoring.results import StepRecord
from engine.scoring.shapes import ANY, NUMBER, ListOf, Shape, shape_of
from engine.scoring.steps import StepBuilder, StepCall, StepKindBase, StepSources, StepSpec, Written, register_step_kind, unregister_step_kind
from engine.scoring.steps.llm import WorkedExample
from engine.testing import JudgeServer, Request


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


# -- a kind that asks the judge, with field names of its own


class AskStep(StepSpec):
    """Asks the judge with `template`; the answer must pass the schema file `answer`."""

    kind: Literal["ask"]
    template: str = Field(description="Template under the prompts folder")
    answer: str = Field(description="Schema file under the schemas folder")
    sees_context: bool = False
    shown: list[WorkedExample] = Field(default_factory=list, description="Worked examples, shown as `examples`")
    on_skip: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class AskPlan(StepPlan):
    kind: str = "ask"
    template: Prompt
    system: Prompt | None = None
    examples: tuple[Mapping[str, Any], ...] = ()
    on_skip: Any = None


class AskKind(StepKindBase[AskStep, AskPlan]):
    name = "ask"
    spec = AskStep
    asks_judge = True
    examples_key: str | None = "shown"

    def sources(self, spec: AskStep) -> StepSources:
        return StepSources(templates=(Written(spec.template, ("template",)),), schema=Written(spec.answer, ("answer",)))

    def uses_context(self, spec: AskStep) -> bool:
        return spec.sees_context

    def describe(self, spec: AskStep) -> str:
        return f"asks {spec.template}, answered as {spec.answer}"

    def compile(self, spec: AskStep, build: StepBuilder) -> AskPlan:
        build.sees({"examples": ListOf(ANY)})
        template = build.template(spec.template, "template")
        model = build.answer_model(spec.answer, "answer")
        build.gives({spec.id: shape_of(model, spec.id)})
        return AskPlan(
            id=spec.id, template=template, system=build.system(None), sampling=build.sampling(None, 512), answer_model=model,
            examples=tuple(example.model_dump() for example in spec.shown), on_skip=spec.on_skip, reads=build.names_read(),
        )

    async def run(self, plan: AskPlan, scope: Mapping[str, Any], call: StepCall) -> StepRecord:
        scope = {**scope, "examples": [dict(example) for example in plan.examples]}
        system, prompt = plan.system.render(scope) if plan.system else None, plan.template.render(scope)
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
        request = JudgeRequest(messages=messages, sampling=plan.sampling, step=plan.id, response_model=plan.answer_model, sample=call.sample)
        answer = await call.ask(request, scope)
        return StepRecord(id=plan.id, kind=plan.kind, system_prompt=system, prompt=prompt, result=plain(answer.value), usage=answer.usage, cached=answer.cached)


@pytest.fixture
def ask_kind() -> Iterator[None]:
    register_step_kind(AskKind())
    yield
    unregister_step_kind("ask")


POLITE = {
    "catalog.yaml": """\
        scorers:
          rude:
            name: Rude
            description: Whether the reply is rude.
            direction: lower_is_better
            steps:
              - id: judged
                kind: ask
                template: rude.j2
                answer: rude.yaml
              - id: score
                kind: score
                score: "(1 if judged.verdict == 'rude' else 0) * options.scale"
        """,
    "prompts/rude.j2": """\
        Decide whether the reply below is rude to the person it answers: "rude" when it mocks, insults or dismisses them, else "polite".
        {% include "partials/examples.j2" %}
        {{ output | untrusted("output") }}
        """,
    "schemas/rude.yaml": """\
        title: RudeVerdict
        type: object
        properties:
          verdict: {type: string, enum: [rude, polite], description: rude or polite}
        required: [verdict]
        """,
}


def polite_catalog(folder: Path) -> Path:
    for name, text in POLITE.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return folder / "catalog.yaml"


def script_rudeness(judge: JudgeServer) -> None:
    """Replies holding RUDE are rude; SLY ones too, once the prompt shows a worked example of one."""

    def verdict(request: Request) -> dict[str, str]:
        reply = request.blocks("output")[0]
        knows_sly = "SLY" in " ".join(request.blocks("example_output"))
        return {"verdict": "rude" if "RUDE" in reply or ("SLY" in reply and knows_sly) else "polite"}

    judge.on("RudeVerdict", verdict)


def test_a_kind_of_its_own_field_names_goes_through_check_show_preview_and_run(tmp_path: Path, ask_kind: None, judge: JudgeServer) -> None:
    script_rudeness(judge)
    path = polite_catalog(tmp_path)
    runner = CliRunner()
    checked = runner.invoke(app, ["check", str(path)])
    assert checked.exit_code == 0 and checked.stdout == "", checked.output
    shown = runner.invoke(app, ["show", "rude", "--config", str(path)])
    assert shown.exit_code == 0, shown.output
    assert "asks rude.j2, answered as rude.yaml" in shown.output
    assert f"judged template: {tmp_path / 'prompts' / 'rude.j2'}" in shown.output and f"judged schema: {tmp_path / 'schemas' / 'rude.yaml'}" in shown.output
    assert "judged template: " in shown.output and "partials/judge_system.j2" in shown.output  # the scorer's system message goes with it
    assert "answer bounds" in shown.output and "  judged: none" in shown.output  # the plan's answer model: an enum has no bound to list
    previewed = runner.invoke(app, ["preview", "rude", "--config", str(path), "--output", "You RUDE person", "--answer", "judged={verdict: rude}"])
    assert previewed.exit_code == 0, previewed.output
    assert "<output>\nYou RUDE person\n</output>" in previewed.output and "score: 1" in previewed.output
    refused = runner.invoke(app, ["preview", "rude", "--config", str(path), "--output", "x", "--answer", "score=1"])
    assert "has no step 'score' that asks a judge" in refused.output and "(those that do: judged)" in refused.output
    ran = runner.invoke(app, ["run", "rude", "--config", str(path), "--output", "You RUDE person", "--model", "openai/gpt-4o-mini", "--json"])
    assert ran.exit_code == 0, ran.output
    assert json.loads(ran.stdout)["score"] == 1 and len(judge.requests_for("RudeVerdict")) == 1
    # A misspelt field of the answer, in the kind's own schema: found at load, at its line.
    (tmp_path / "catalog.yaml").write_text(path.read_text(encoding="utf-8").replace("judged.verdict", "judged.verdcit"), encoding="utf-8")
    wrong = runner.invoke(app, ["check", str(path)])
    assert wrong.exit_code == 1 and "catalog.yaml:13:30: rude.score.score: judged has no field 'verdcit'; did you mean 'verdict'?" in wrong.stdout


def test_the_workbench_checks_a_kind_of_its_own(tmp_path: Path, ask_kind: None, judge: JudgeServer) -> None:
    from engine.workbench.server import Workbench

    path = polite_catalog(tmp_path / "mine")
    started = Workbench(path.parent, tmp_path / "results.sqlite").start()
    try:
        def ask(route: str, body: dict[str, Any]) -> Any:
            request = urllib.request.Request(
                f"http://127.0.0.1:{started.port}{route}", data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json", "Cookie": f"scorers_workbench={started.token}", "X-Workbench-Session": started.session_key},
            )
            with urllib.request.urlopen(request) as response:
                return json.loads(response.read().decode())

        assert ask("/api/check", {"files": {}})["problems"] == []
        files = [file["path"] for file in ask("/api/scorer", {"scorer": "rude", "files": {}})["files"]]
        assert files[:1] == ["catalog.yaml"] and "prompts/rude.j2" in files and "schemas/rude.yaml" in files
        broken = {"prompts/rude.j2": POLITE["prompts/rude.j2"].replace("output |", "ouptut |")}
        [problem] = ask("/api/check", {"files": {name: textwrap.dedent(text) for name, text in broken.items()}})["problems"]
        assert (problem["path"], problem["line"]) == ("prompts/rude.j2", 3) and "did you mean 'output'" in problem["message"]
    finally:
        started.stop()


@pytest.mark.slow
def test_align_changes_a_kind_of_its_own_by_its_own_keys(tmp_path: Path, ask_kind: None, judge: JudgeServer) -> None:
    script_rudeness(judge)
    path = polite_catalog(tmp_path / "mine")
    rows = [{"id": f"plain-{n}", "output": f"Thank you, reply {n}", "expected": {"rude": False}} for n in range(40)]
    rows += [{"id": f"rude-{n}", "output": f"You RUDE person {n}", "expected": {"rude": True}} for n in range(20)]
    rows += [{"id": f"sly-{n}", "output": f"What a SLY remark {n}", "expected": {"rude": True}} for n in range(20)]
    data = tmp_path / "labelled.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    aligned = CliRunner().invoke(
        app, ["align", str(data), "--scorer", "rude", "--config", str(path), "--trials", "2", "--model", "openai/gpt-4o-mini",
              "--store", str(tmp_path / "results.sqlite"), "-o", str(tmp_path / "aligned")],
    )
    assert aligned.exit_code == 0, aligned.output
    written = yaml.safe_load((tmp_path / "aligned" / "scorers.yaml").read_text(encoding="utf-8"))
    [step] = [step for step in written["scorers"]["rude"]["steps"] if step["id"] == "judged"]
    assert "SLY" in step["shown"][0]["output"] and "examples" not in step  # under the kind's own key
    variant = load_scorers(tmp_path / "aligned" / "scorers.yaml")
    assert variant.create("rude", model="openai/gpt-4o-mini").run(output="What a SLY remark again").score == 1

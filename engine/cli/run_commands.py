"""Commands about one output: score it (`run`), or show the prompts it would send (`preview`)."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer
import yaml
from rich.rule import Rule

from ..errors import ConfigError
from ..formatting import to_json
from ..judge.middleware.budget import SpendLimit
from ..scoring import RunInput, ScorerPlan, each_judge
from ..scoring.assembly import within_budget
from ..scoring.preview import preview
from ..scoring.steps import step_kind
from ..scoring.transcripts import assistant_text
from .app import app, console, suggestion
from .options import ScorerSetup, flags
from .common import (
    ConfigOption,
    ContextOption,
    GroundTruthOption,
    InputOption,
    JsonFlag,
    MetadataOption,
    ReasonsOption,
    ScorerArgument,
    ScorerOptions,
    catalog_from,
    one_line_errors,
    parse_options,
    yaml_value,
    print_json,
    read_metadata,
    read_value,
    reasons_policy,
    scorer_options,
)


TurnsOption = Annotated[Optional[str], typer.Option(help="A whole conversation: @file.json holding a list of chat messages")]
#: One output's budget: no resume, so what MaxCostOption says of a run does not apply.
OneOutputMaxCostOption = Annotated[
    Optional[float],
    typer.Option("--max-cost", min=0.000001, help="No judge call leaves that could take this output's judging past this many US dollars (a jury or a cascade makes many)"),
]
ExpectedTrajectoryOption = Annotated[
    Optional[str], typer.Option(help="The tool calls expected, in order: JSON/YAML list of names or {tool_name, args}, or @file.json")
]


@app.command("run")
@one_line_errors
@flags(ScorerSetup)
def run_scorer(
    scorer: ScorerArgument,
    setup: ScorerSetup,
    output: Annotated[Optional[str], typer.Option(help="The output to judge; @file reads a file (a .json file may hold chat messages)")] = None,
    input: InputOption = None,  # noqa: A002
    context: ContextOption = None,
    ground_truth: GroundTruthOption = None,
    turns: TurnsOption = None,
    expected_trajectory: ExpectedTrajectoryOption = None,
    metadata: MetadataOption = None,
    config: ConfigOption = None,
    as_json: JsonFlag = False,
    reasons: ReasonsOption = "always",
    max_cost: OneOutputMaxCostOption = None,
) -> None:
    """Score one output and print the score and the reason."""
    catalog = catalog_from(config)
    if catalog.plan(scorer).pairwise:  # one order alone would carry the judge's position bias
        raise ConfigError(
            f"{scorer} judges two outputs: score them with `scorers pairwise DATA --scorer {scorer}` (each pair in both orders), "
            f"or see its prompts with `scorers preview {scorer} --output ... --second-output ...`"
        )
    policy = reasons_policy(reasons)
    scorer_object = each_judge(setup.create(catalog, scorer, context=context), lambda member: member.with_reasons(policy))
    # The budget live scoring takes (LiveScorer's max_cost): every judge's calls held to one limit.
    scorer_object = within_budget(scorer_object, SpendLimit(max_cost) if max_cost is not None else None)
    given = RunInput(
        output=read_value(output, transcript=True),
        input=read_value(input, transcript=True),
        ground_truth=read_value(ground_truth),
        turns=_list_value(turns, "--turns"),
        expected_trajectory=_list_value(expected_trajectory, "--expected-trajectory"),
        metadata=read_metadata(metadata),
    )
    result = scorer_object.score(given)
    if as_json:
        print_json(result.to_dict())
        return
    better = "lower is better" if scorer_object.plan.direction == "lower_is_better" else "higher is better"
    console.print(f"[bold]{scorer_object.id}[/bold]: {result.score:g} ({better})")
    if result.reason:
        console.print(result.reason, markup=False, highlight=False, soft_wrap=True)
    not_asked = next((record.not_asked for record in result.steps.values() if record.not_asked), None)
    if not_asked is not None:
        why = {"passing": "the score passes", "sure": "the judge was sure"}.get(not_asked, f"--reasons {not_asked}")
        console.print(f"(no reason asked of the judge: {why}; --reasons always asks for it)", style="dim", highlight=False)
    for verdict in result.judges or []:
        line = f"  {verdict.model}: {verdict.score:g}" + ("" if verdict.passed is None else (" pass" if verdict.passed else " fail"))
        line += f" (asked because {verdict.escalation})" if verdict.escalation else ""
        console.print(line + (f" - {verdict.reason}" if verdict.reason else ""), markup=False, highlight=False, soft_wrap=True)
    if result.disagreement:
        console.print("The judges disagree on this output.", style="yellow", highlight=False)
    # A computed scorer writes no reason: what its score was computed from says why.
    for record in result.steps.values():
        if record.kind == "compute" and not record.skipped:
            for name, value in record.result.items():
                console.print(f"{record.id}.{name}: {to_json(value)}", markup=False, highlight=False, soft_wrap=True)


def _list_value(value: str | None, flag: str) -> list[Any] | None:
    """A list given inline (JSON or YAML) or as @file."""
    if value is None:
        return None
    parsed = read_value(value) if value.startswith("@") else yaml_value(value, flag)
    if isinstance(parsed, str) and value.startswith("@"):
        parsed = yaml_value(parsed, flag)
    if not isinstance(parsed, list):
        raise ConfigError(f"{flag} must be a list, got {type(parsed).__name__}")
    return parsed


def _given_answers(pairs: list[str], plan: ScorerPlan) -> dict[str, Any]:
    """`--answer STEP=ANSWER` pairs, each naming a step of the scorer that asks the judge."""
    asking = [step.id for step in plan.steps if step_kind(step.kind).asks_judge]
    answers: dict[str, Any] = {}
    for name, value in parse_options(pairs).items():
        if name not in asking:
            hint = suggestion(name, asking)
            raise ConfigError(f"--answer {name}: {plan.id} has no step {name!r} that asks a judge{hint} (those that do: {', '.join(asking) or 'none'})")
        answers[name] = yaml.safe_load(read_value(value)) if str(value).startswith("@") else value
    return answers


@app.command("preview")
@one_line_errors
def preview_prompts(
    scorer: ScorerArgument,
    output: Annotated[Optional[str], typer.Option(help="A sample output; @file reads a file (a .json file may hold chat messages)")] = None,
    input: InputOption = None,  # noqa: A002
    context: ContextOption = None,
    ground_truth: GroundTruthOption = None,
    turns: TurnsOption = None,
    expected_trajectory: ExpectedTrajectoryOption = None,
    second_output: Annotated[
        Optional[str], typer.Option(help="For a pairwise scorer: the output shown second; @file reads a file (a .json file may hold chat messages)")
    ] = None,
    answer: Annotated[Optional[list[str]], typer.Option("--answer", help="STEP=ANSWER: the judge's answer for a step (JSON/YAML, or @file), to render the steps after it")] = None,
    metadata: MetadataOption = None,
    option: ScorerOptions = None,
    config: ConfigOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Show the exact prompts a scorer would send, without calling a judge."""
    catalog = catalog_from(config)
    options = scorer_options(option, context, catalog.plan(scorer).options_model)
    answers = _given_answers(answer or [], catalog.plan(scorer))
    given_metadata = read_metadata(metadata)
    if catalog.plan(scorer).pairwise:
        if second_output is None:
            raise ConfigError(f"{scorer} judges two outputs: give the second with --second-output TEXT (or @file)")
        # The same text `scorers pairwise` gives the judge as the second output.
        given_metadata = {**(given_metadata or {}), "second_output": assistant_text(read_value(second_output, transcript=True))}
    elif second_output is not None:
        raise ConfigError(f"--second-output: {scorer} judges one output; the flag is for a pairwise scorer (one with `pairwise: true`)")
    shown = preview(
        catalog.plan(scorer), read_value(output, transcript=True), input=read_value(input, transcript=True),
        ground_truth=read_value(ground_truth), answers=answers, options=options, metadata=given_metadata,
        turns=_list_value(turns, "--turns"), expected_trajectory=_list_value(expected_trajectory, "--expected-trajectory"),
    )
    if as_json:
        print(shown.model_dump_json(indent=2))
        return
    for prompt in shown.prompts:
        if prompt.system:
            console.print(Rule(f"{prompt.step} · system", align="left"))
            console.print(prompt.system, markup=False, highlight=False, soft_wrap=True)
        console.print(Rule(f"{prompt.step} · prompt", align="left"))
        console.print(prompt.prompt, markup=False, highlight=False, soft_wrap=True)
    console.print(Rule())
    if shown.needs_answer_for is not None:
        step = catalog.plan(scorer).step(shown.needs_answer_for)
        fields = list(step.answer_model.model_fields) if step.answer_model is not None else ["(free text)"]
        console.print(
            f"To render the steps after {step.id!r}, give its answer: --answer {step.id}='{{...}}' (fields: {', '.join(fields)})",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    elif shown.result is not None:
        console.print(f"score: {shown.result.score:g}", markup=False)
        if shown.result.reason:
            console.print(f"reason: {shown.result.reason}", markup=False, highlight=False, soft_wrap=True)

"""Every word a scorer author may write, as pydantic models: the catalog file, a scorer,
its judge settings and option rules. The words of each step kind are in that kind's
module (`scoring/steps/`): a scorer's `steps` accept every registered kind. Loading
validates a catalog against these; `catalog_json_schema()` gives editors the same
vocabulary.

Nothing here compiles or runs anything.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from ..judge import Provider
from ..scoring.steps import ReducerSpec as ReducerSpec  # read here by the expressions and answers of the catalog
from ..scoring.steps import Rule as Rule
from ..scoring.steps import StepJudge, StepSpec, step_kind, step_kinds, when_kinds_change

RunField = Literal["output", "input", "context", "ground_truth", "turns", "expected_trajectory"]

#: Variables every template and expression of a run can use, beside earlier steps' ids.
RUN_VARIABLES = (
    "output", "input", "context", "ground_truth", "options", "messages", "tool_calls", "tool_results", "turns", "expected_trajectory",
    "metadata",
)
#: Set by the score step for the steps after it.
SCORE_VARIABLES = ("score", "score_values")
#: `examples`: an llm step's own worked examples, as its templates see them.
RESERVED_NAMES = {*RUN_VARIABLES, *SCORE_VARIABLES, "item", "rank", "examples"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class JudgeSpec(StepJudge):
    """The scorer's judge: default model, sampling, system instructions, limits."""

    model: str | None = Field(default=None, description="Default 'provider/model'")
    rpm: float | None = Field(default=None, gt=0, description="Requests per minute to the judge model, for the whole process")
    tpm: float | None = Field(default=None, gt=0, description="Tokens per minute to the judge model, for the whole process")
    timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False, description="Seconds the judge may send nothing, before or while it answers (default 60)")
    retries: int | None = Field(default=None, ge=0, le=10, description="Retries of a failed call: 429, 5xx, timeouts (default 2)")
    max_input_chars: int = Field(
        default=100_000, gt=0, description="Longest output, input or context (all pieces together) sent to the judge, in characters"
    )
    long_input: Literal["refuse", "truncate"] = Field(
        default="refuse", description="What happens to a longer one: refused as an error, or cut to the limit with a warning"
    )
    confidence_samples: int | None = Field(
        default=None, ge=2, le=10,
        description="Where the judge gives no log-probabilities (Claude): samples of each answer whose shares are its verdicts' probabilities, at their cost",
    )


class JurySpec(_Strict):
    """Several judges score every run; one aggregate score comes out, each judge's kept."""

    models: list[str] = Field(min_length=2, description="'provider/model' of each judge")
    aggregate: Literal["mean", "median", "majority", "strictest"] = "mean"
    threshold: Optional[float] = Field(default=None, description="Pass line of each judge's verdict (needed by majority)")
    margin: Optional[float] = Field(default=None, ge=0, description="Scores further apart than this are a disagreement (default 0.3)")

    @model_validator(mode="before")
    @classmethod
    def _from_list(cls, value: Any) -> Any:
        return {"models": value} if isinstance(value, list) else value


class CascadeSpec(_Strict):
    """The scorer's judge scores every output; one it is unsure of goes to a stronger judge."""

    escalate_to: str = Field(description="'provider/model' of the strong judge")
    margin: Optional[float] = Field(default=None, ge=0, allow_inf_nan=False, description="A score this close to the threshold is sent on (default 0.1)")
    samples: int = Field(default=1, ge=1, le=5, description="Samples the cheap judge takes of each output; their verdicts disagreeing sends it on")
    threshold: Optional[float] = Field(default=None, allow_inf_nan=False, description="The pass line (default: the scorer's threshold, else half the scale)")
    min_confidence: Optional[float] = Field(
        default=None, ge=0, le=1, allow_inf_nan=False,
        description="A probability: an output whose pass/fail the cheap judge is less sure of is sent on (from its verdicts' log-probabilities, no extra samples)",
    )


class ScorerDefinition(_Strict):
    """One scorer, as written in a catalog."""

    id: str
    name: str
    description: str
    direction: Literal["higher_is_better", "lower_is_better"]
    requires: list[RunField] = Field(default=["output"])
    options: dict[str, Any] = Field(default_factory=dict, description="Option name: JSON Schema with default")
    judge: JudgeSpec = Field(default_factory=JudgeSpec)
    judges: Optional[JurySpec] = Field(default=None, description="A jury: a list of models, or models, aggregate, threshold, margin")
    cascade: Optional[CascadeSpec] = Field(
        default=None, description="A cascade: escalate_to (the strong judge), margin, samples, threshold; the scorer's judge is the cheap one"
    )
    context_from_tool_results: bool = Field(
        default=False, description="With no context given, use the tool results found in the output messages"
    )
    threshold: Optional[float] = Field(
        default=None,
        allow_inf_nan=False,
        description="The scorer's pass line: a score past it on the worse side flags its item (a score on it passes); runs gate their mean on it and agreement with labels is measured at it; "
        "default half the scale. `scorers calibrate` finds the one that agrees best; a run's --threshold wins over it",
    )
    empty_output: Literal["not_scorable", "score"] = Field(
        default="not_scorable",
        description="An empty output (no text and no tool call: '', only whitespace, a transcript with no assistant message): "
        "not_scorable (the default: the item is not scorable, with the reason, and never gets a score) or score (it is "
        "scored like any other, for a scorer whose score of an empty output means something). Only for a scorer that "
        "requires `output`",
    )
    option_rules: list[Rule] = Field(
        default_factory=list,
        description="Checks over `options` that no single option's schema can say (e.g. 'one of two is set'); "
        "checked against the defaults at load time and against the given options when a scorer is created",
    )
    replaces: bool = Field(
        default=False,
        description="This scorer takes the place of the built-in scorer of the same id (without it, reusing a built-in's id is refused; "
        "a scorer that `extends` the built-in of its own id changes it and needs no `replaces`). Not inherited",
    )
    pairwise: bool = Field(
        default=False,
        description="Judges two outputs of one input (`scorers pairwise`): `output` is shown first, `metadata.second_output` "
        "second; the score is 1 when the first is better, 0 when the second is, 0.5 for a tie",
    )
    abstract: bool = Field(
        default=False,
        description="A base whose options are completed later (by a scorer that `extends` it, or at creation): "
        "its option rules are not checked against its defaults at load time. Not inherited",
    )
    #: Every registered step kind's spec, told apart by `kind` (see `_accept_registered_kinds`).
    steps: list[StepSpec]

    @model_validator(mode="after")
    def _one_way_to_judge(self) -> ScorerDefinition:
        if self.judges is not None and self.cascade is not None:
            raise ValueError("a scorer has a jury (judges:) or a cascade (cascade:), not both")
        return self

    @model_validator(mode="after")
    def _check_steps(self) -> ScorerDefinition:
        ids = [step.id for step in self.steps]
        duplicates = sorted({step_id for step_id in ids if ids.count(step_id) > 1})
        if duplicates:
            raise ValueError(f"step ids must be unique: {', '.join(duplicates)}")
        parts = [step_kind(step.kind).result_part for step in self.steps]
        if parts.count("score") != 1:
            raise ValueError(f"a scorer needs exactly one step of kind {_kinds_giving('score')}")
        if parts.count("reason") > 1 or ("reason" in parts and parts.index("reason") < parts.index("score")):
            raise ValueError(f"a scorer has at most one {_kinds_giving('reason')} step, after the {_kinds_giving('score')} step")
        for step in self.steps:
            # A step whose result is a variable named by its id must not hide a run variable
            # (the score step gives `score` and `score_values`, whatever its id).
            kind = step_kind(step.kind)
            taken = RESERVED_NAMES - set(SCORE_VARIABLES) if kind.result_part == "score" else RESERVED_NAMES
            if step.id in kind.names(step) and step.id in taken:
                raise ValueError(f"step id {step.id!r} is a variable name already; avoid {sorted(RESERVED_NAMES)}")
            if step.skip_if is not None and getattr(step, "on_skip", None) is None:
                raise ValueError(f"step {step.id!r} has skip_if but no on_skip (what the step gives when skipped)")
        return self


def _kinds_giving(part: str) -> str:
    return " or ".join(repr(name) for name, kind in step_kinds().items() if kind.result_part == part)


def _accept_registered_kinds() -> None:
    """`steps` validates each step against the spec of the kind it names, among the kinds
    registered now; run again whenever a kind is registered."""
    specs = tuple(kind.spec for kind in step_kinds().values())
    field = ScorerDefinition.model_fields["steps"]
    field.annotation = list[Annotated[Union[specs], Field(discriminator="kind")]]  # type: ignore[valid-type]
    ScorerDefinition.model_rebuild(force=True)


_accept_registered_kinds()
when_kinds_change(_accept_registered_kinds)


class CatalogDefaults(_Strict):
    """What every scorer of the file starts from; a scorer's own keys win, key by key."""

    judge: JudgeSpec | None = Field(default=None, description="Judge settings shared by the scorers of this file")
    options: dict[str, Any] | None = Field(
        default=None, description="Options every scorer of this file has (name: JSON Schema with default), e.g. scale, language"
    )


class CatalogFile(_Strict):
    """The top of a catalog file: where its prompts and schemas are, what its scorers share,
    and its scorers."""

    prompts: str = Field(default="prompts", description="Folder of the prompt templates, relative to this file")
    schemas: str = Field(default="schemas", description="Folder of the answer schemas, relative to this file")
    defaults: CatalogDefaults = Field(default_factory=CatalogDefaults)
    providers: dict[str, Provider] = Field(
        default_factory=dict,
        description="More judge providers, by the prefix of 'provider/model': base_url, api_key_env, key_needed, mode, adapter",
    )
    scorers: dict[str, dict[str, Any]]
    monitors: Optional[dict[str, dict[str, Any]]] = Field(
        default=None, description="Monitors over the live scores of these scorers: statistic, window, condition, alerts (docs/monitoring.md)"
    )
    queues: Optional[dict[str, dict[str, Any]]] = Field(
        default=None, description="Review queues of these scorers: instructions, the label people give, labels per item (docs/labelling.md)"
    )
    traces: Optional[dict[str, Any]] = Field(
        default=None, description="Which spans of an app's OpenTelemetry traces are scored and how they become items (docs/traces.md)"
    )


#: Step fields always written, even in a step that overrides one of a base scorer; the rest
#: may come from `extends:` or `defaults:`.
_ALWAYS_WRITTEN = {"id"}


def catalog_json_schema() -> dict[str, Any]:
    """A JSON Schema of the catalog format, for editors (yaml-language-server and the like):
    keys are completed and described, and unknown keys and wrong types are underlined. It is
    lenient where a catalog is: a scorer that `extends` another, or takes keys from
    `defaults:`, writes only what it changes."""
    # Built here, not once: the scorers' step kinds are those registered now.
    editor_catalog = create_model("_EditorCatalog", __base__=CatalogFile, scorers=(dict[str, ScorerDefinition], ...))
    schema = editor_catalog.model_json_schema(by_alias=True)
    definitions: dict[str, Any] = schema.get("$defs", {})
    scorer = definitions["ScorerDefinition"]
    scorer["properties"].pop("id")
    scorer["properties"] = {
        "extends": {"type": "string", "description": "The scorer this one starts from (of this file, or a built-in)"},
        **scorer["properties"],
    }
    for definition in definitions.values():
        written = _ALWAYS_WRITTEN if "kind" in definition.get("properties", {}) else set()
        required = [name for name in definition.get("required", []) if name in written]
        if required:
            definition["required"] = required
        else:
            definition.pop("required", None)
    _loosen_unions(schema)
    schema.pop("title", None)
    schema.pop("description", None)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "llm-scorers catalog",
        "description": "A scorers.yaml file: prompt and schema folders, shared defaults, and scorers defined as steps.",
        **schema,
    }


def _loosen_unions(node: Any) -> None:
    """An overriding step names only what it changes, so it may match several step kinds."""
    if isinstance(node, dict):
        node.pop("discriminator", None)
        if "oneOf" in node:
            node["anyOf"] = node.pop("oneOf")
        for value in node.values():
            _loosen_unions(value)
    elif isinstance(node, list):
        for value in node:
            _loosen_unions(value)

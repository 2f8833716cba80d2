"""Every word a scorer author may write, as pydantic models: the catalog file, a scorer,
its steps of each kind, its judge settings, rules and reducers. Loading validates a catalog
against these; `catalog_json_schema()` gives editors the same vocabulary.

Nothing here compiles or runs anything.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..judge import Provider, Sampling

RunField = Literal["output", "input", "context", "ground_truth", "turns", "expected_trajectory"]

#: Variables every template and expression of a run can use, beside earlier steps' ids.
RUN_VARIABLES = (
    "output", "input", "context", "ground_truth", "options", "messages", "tool_calls", "tool_results", "turns", "expected_trajectory",
    "metadata",
)  # fmt: skip
#: Set by the score step for the steps after it.
SCORE_VARIABLES = ("score", "score_values")
RESERVED_NAMES = {*RUN_VARIABLES, *SCORE_VARIABLES, "item", "rank"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Rule(_Strict):
    """A check the judge's answer must pass, beyond its shape."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    check: str = Field(description="Expression over the answer's fields and earlier steps")
    message: str = Field(description="Told to the judge when it fails (a template)")


class ReducerSpec(_Strict):
    """Turns the list found at `items` into one number.

    - `ratio`: share of items for which `where` holds.
    - `mean` / `sum` / `min` / `max`: of `value` computed per item.
    - `count`: number of items for which `where` holds.
    - `average_precision`: items are ranked; `where` marks the relevant ones; the mean of
      precision@k over the ranks k of relevant items (0 when none is relevant).

    `empty` is the number an empty list gives (a ratio of nothing is not defined otherwise).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    reduce: Literal["ratio", "mean", "sum", "min", "max", "count", "average_precision"]
    items: str = Field(description="Expression giving the list, e.g. analyze.verdicts")
    where: str | None = Field(default=None, description="Condition per item, sees `item`")
    value: str | None = Field(default=None, description="Number per item, sees `item`")
    empty: float = 0.0


class StepJudge(Sampling):
    """Per-step changes to the scorer's judge settings."""

    system: str | None = Field(default=None, description="Template of the system message")


class JudgeSpec(StepJudge):
    """The scorer's judge: default model, sampling, system instructions, limits."""

    model: str | None = Field(default=None, description="Default 'provider/model'")
    rpm: float | None = Field(default=None, gt=0, description="Requests per minute to the judge model, for the whole process")
    tpm: float | None = Field(default=None, gt=0, description="Tokens per minute to the judge model, for the whole process")
    timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False, description="Seconds per judge call (default 60)")
    retries: int | None = Field(default=None, ge=0, le=10, description="Retries of a failed call: 429, 5xx, timeouts (default 2)")
    max_input_chars: int = Field(
        default=100_000, gt=0, description="Longest output, input or context (all pieces together) sent to the judge, in characters"
    )
    long_input: Literal["refuse", "truncate"] = Field(
        default="refuse", description="What happens to a longer one: refused as an error, or cut to the limit with a warning"
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

    @model_validator(mode="after")
    def _majority_needs_threshold(self) -> JurySpec:
        if self.aggregate == "majority" and self.threshold is None:
            raise ValueError("aggregate: majority needs a threshold (the pass line of each judge's verdict)")
        return self


class _StepBase(_Strict):
    id: str
    skip_if: str | None = Field(default=None, description="Expression; when true the step is not run")

    @field_validator("id")
    @classmethod
    def _plain_id(cls, value: str) -> str:
        if not value.isidentifier():
            raise ValueError(f"step id {value!r} must be an identifier (letters, digits, _)")
        return value


class LLMStep(_StepBase):
    """Asks the judge with a rendered template; the answer must pass the schema."""

    kind: Literal["llm"]
    prompt: str = Field(description="Template under the prompts folder")
    answer_schema: str = Field(alias="schema", description="Schema file under the schemas folder")
    uses_context: bool = False
    judge: StepJudge | None = None
    rules: list[Rule] = Field(default_factory=list)
    on_skip: dict[str, Any] | None = Field(default=None, description="The step's result when skipped")


class ReasonStep(_StepBase):
    """Asks the judge to explain the score; the result is text."""

    kind: Literal["reason"]
    prompt: str
    answer_schema: str | None = Field(default=None, alias="schema", description="Must have a `reason` string")
    uses_context: bool = False
    judge: StepJudge | None = None
    on_skip: str | None = Field(default=None, description="Template of the reason when skipped")


class NotScorableSpec(_Strict):
    """A score step's `on_skip` that leaves the item unscored: it is counted as not
    scorable, with the reason, and kept out of the means (as an item without a needed field is)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    not_scorable: str = Field(min_length=1, description="Why such an item cannot be scored, shown with it")


class ScoreStep(_StepBase):
    """Computes the score from earlier steps, without a model."""

    kind: Literal["score"]
    values: dict[str, Union[ReducerSpec, str]] = Field(default_factory=dict, description="Named values, in order")
    score: str = Field(description="Expression of the final score")
    round: int | None = Field(default=2, ge=0)
    on_skip: float | NotScorableSpec | None = Field(
        default=None, description="The score when skipped, or {not_scorable: reason} to leave the item unscored"
    )


class ComputeStep(_StepBase):
    """Computes named values without a model, in order, each an expression that may call
    the function library (words, keywords, similarity, sentiment, trajectory_match ...) and
    read the values before it. The step's result (an object of the values) is the variable
    named by its id."""

    kind: Literal["compute"]
    values: dict[str, str] = Field(description="Named values, in order: name -> expression")
    on_skip: dict[str, Any] | None = Field(default=None, description="The step's result when skipped")

    @field_validator("values")
    @classmethod
    def _value_names(cls, values: dict[str, str]) -> dict[str, str]:
        if not values:
            raise ValueError("a compute step needs at least one value")
        for name in values:
            if not name.isidentifier():
                raise ValueError(f"value name {name!r} must be an identifier (letters, digits, _)")
        return values

    def produces(self) -> list[str]:
        """The names later steps can read: the step's id (its values are its fields)."""
        return [self.id]


Step = Annotated[Union[LLMStep, ReasonStep, ScoreStep, ComputeStep], Field(discriminator="kind")]


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
    context_from_tool_results: bool = Field(
        default=False, description="With no context given, use the tool results found in the output messages"
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
    abstract: bool = Field(
        default=False,
        description="A base whose options are completed later (by a scorer that `extends` it, or at creation): "
        "its option rules are not checked against its defaults at load time. Not inherited",
    )
    steps: list[Step]

    @model_validator(mode="after")
    def _check_steps(self) -> ScorerDefinition:
        ids = [step.id for step in self.steps]
        duplicates = sorted({step_id for step_id in ids if ids.count(step_id) > 1})
        if duplicates:
            raise ValueError(f"step ids must be unique: {', '.join(duplicates)}")
        kinds = [step.kind for step in self.steps]
        if kinds.count("score") != 1:
            raise ValueError("a scorer needs exactly one step of kind 'score'")
        if kinds.count("reason") > 1 or ("reason" in kinds and kinds.index("reason") < kinds.index("score")):
            raise ValueError("a scorer has at most one 'reason' step, after the 'score' step")
        for step in self.steps:
            # The results of llm, compute and reason steps become variables named by their id.
            if step.kind != "score" and step.id in RESERVED_NAMES:
                raise ValueError(f"step id {step.id!r} is a variable name already; avoid {sorted(RESERVED_NAMES)}")
            if step.skip_if is not None and step.on_skip is None:
                raise ValueError(f"step {step.id!r} has skip_if but no on_skip (what the step gives when skipped)")
        return self


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


class _EditorCatalog(CatalogFile):
    """The catalog as an editor sees it: every scorer written out."""

    scorers: dict[str, ScorerDefinition]  # type: ignore[assignment]


#: Step fields always written, even in a step that overrides one of a base scorer; the rest
#: may come from `extends:` or `defaults:`.
_ALWAYS_WRITTEN = {"id"}


def catalog_json_schema() -> dict[str, Any]:
    """A JSON Schema of the catalog format, for editors (yaml-language-server and the like):
    keys are completed and described, and unknown keys and wrong types are underlined. It is
    lenient where a catalog is: a scorer that `extends` another, or takes keys from
    `defaults:`, writes only what it changes."""
    schema = _EditorCatalog.model_json_schema(by_alias=True)
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

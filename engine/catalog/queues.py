"""What a review queue asks of the people who label it, declared beside its scorer in a
catalog's `queues:` section and checked at load like everything else (FILE:LINE):

    queues:
      hallucination-review:
        scorer: hallucination
        instructions: >-
          Read the context, then the answer. Flag the answer when it says
          anything the context does not support.
        label:
          kind: verdict              # verdict (pass/flag), category, or score (a number on the scorer's scale)
        note: true                   # a free-text note beside the label
        steps:                       # optional: one label per answer of a judge step
          answers: analyze.verdicts  # the step's list, one entry per claim
          text: statement            # what each entry shows
          judged: verdict            # the judge's own answer in each entry
          choices: ["yes", "no"]     # what a reviewer may answer for each
        show: [input, output, context]   # the item's fields shown (default: all but metadata)
        labels_per_item: 2           # people who label each item
        blind: true                  # the judge's score and reason shown only once labelled
        lease: 15m                   # how long an open item stays with one reviewer

A category label names the categories that mean the scorer should flag the item (`flag:`),
so every label reads as pass/flag for the judge's agreement.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import CatalogErrors, ConfigError
from .monitors import parse_duration
from .setting_checks import Fact, first_problem, held
from .source import load_yaml, locate, validation_error, validation_errors
from .suggest import did_you_mean

#: The fields of an item a queue may show, in the order the review page shows them.
Field_ = Literal["input", "turns", "output", "tool_calls", "context", "ground_truth", "metadata"]
FIELDS: tuple[Field_, ...] = ("input", "turns", "output", "tool_calls", "context", "ground_truth", "metadata")
#: Shown unless a queue says otherwise: metadata may hold a label (HaluEval's does).
SHOWN: tuple[Field_, ...] = FIELDS[:-1]
DEFAULT_INSTRUCTIONS = (
    "Read the item and decide as the scorer should: flag it when the scorer should flag it, pass it otherwise. "
    "Add a note when the reason is not obvious."
)
LONGEST_LEASE = timedelta(hours=24)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LabelSpec(_Strict):
    """The one label a reviewer gives each item."""

    kind: Literal["verdict", "category", "score"] = Field(
        default="verdict", description="verdict: pass or flag; category: one of `categories`; score: a number on the scorer's scale"
    )
    categories: list[str] | None = Field(default=None, description="A category label's choices")
    flag: list[str] | None = Field(default=None, description="The categories that mean the scorer should flag the item")

    @model_validator(mode="after")
    def _categories(self) -> LabelSpec:
        if self.kind == "category":
            if not self.categories or len(self.categories) < 2:
                raise ValueError("a category label needs `categories:`, at least two")
            if len(set(self.categories)) != len(self.categories):
                raise ValueError("`categories:` names a category twice")
            if self.flag is None:
                raise ValueError("a category label needs `flag:`, the categories that mean the scorer should flag the item")
        elif self.categories is not None or self.flag is not None:
            raise ValueError(f"`categories` and `flag` belong to a category label, not a {self.kind} label")
        return self


class StepLabels(_Strict):
    """One label per entry of a judge step's answer (each claim's verdict)."""

    answers: str = Field(description="STEP.FIELD: the step's list of answers, e.g. analyze.verdicts")
    text: str | None = Field(default="statement", description="The field of each entry shown to the reviewer (none: the entry is text)")
    judged: str | None = Field(default=None, description="The field holding the judge's own answer, shown once the item is labelled")
    choices: list[str] = Field(min_length=2, description="What a reviewer may answer for each entry")

    @field_validator("answers")
    @classmethod
    def _dotted(cls, value: str) -> str:
        if value.count(".") != 1 or not all(value.split(".")):
            raise ValueError(f"answers {value!r}: expected STEP.FIELD, e.g. analyze.verdicts")
        return value

    @property
    def step(self) -> str:
        return self.answers.split(".")[0]

    @property
    def field(self) -> str:
        return self.answers.split(".")[1]


class QueueSpec(_Strict):
    """A review queue's declaration; see the module docstring."""

    name: str = Field(default="", description="Set from the key in YAML")
    scorer: str = Field(description="The scorer whose items are labelled")
    instructions: str = Field(default=DEFAULT_INSTRUCTIONS, min_length=1)
    label: LabelSpec = Field(default_factory=LabelSpec)
    note: bool = Field(default=True, description="Offer a free-text note beside the label")
    steps: StepLabels | None = None
    highlight: str | None = Field(default=None, description="STEP.FIELD whose texts are highlighted in the output (default: the texts of `steps`)")
    show: list[Field_] = Field(
        default_factory=lambda: list(SHOWN),
        description="The item's fields shown, among those it has (default: all but metadata, which may hold a label)",
    )
    labels_per_item: int = Field(default=1, ge=1, le=20, description="How many people label each item")
    blind: bool = Field(default=True, description="Hide the judge's score and reason until the item is labelled")
    lease: str = Field(default="15m", description="How long an open item stays with one reviewer: 90s, 15m, 2h")

    @field_validator("lease", mode="before")
    @classmethod
    def _a_duration(cls, value: Any) -> Any:
        if not isinstance(value, str):
            raise ValueError(f"lease {value!r}: expected a duration with its unit, such as 90s, 15m or 2h")
        return value

    @field_validator("lease")
    @classmethod
    def _lease(cls, value: str) -> str:
        try:
            span = parse_duration(value, "lease")
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        if span > LONGEST_LEASE:
            raise ValueError(f"lease {value!r}: at most 24h (an item held longer is lost to the others)")
        return value

    @field_validator("highlight")
    @classmethod
    def _highlight(cls, value: str | None) -> str | None:
        if value is not None and (value.count(".") != 1 or not all(value.split("."))):
            raise ValueError(f"highlight {value!r}: expected STEP.FIELD, e.g. preprocess.claims")
        return value

    @property
    def lease_seconds(self) -> float:
        return parse_duration(self.lease, "lease").total_seconds()

    def flags(self, value: bool | float | str, threshold: float, lower_is_better: bool) -> bool:
        """Whether a label says the item should be flagged: a verdict says it, a category is
        one of `flag:`, and a number is past the threshold as a score would be."""
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            return value in (self.label.flag or [])
        return value > threshold if lower_is_better else value < threshold


class _QueuesSection(_Strict):
    queues: dict[str, QueueSpec]


def default_queue(name: str, scorer: str) -> QueueSpec:
    """The queue made for a scorer when the catalog declares none of that name: pass/flag
    and a note, one person per item, blind."""
    return QueueSpec(name=name, scorer=scorer)


def queues_in(
    data: Mapping[str, Any],
    path: Path,
    known_scorers: Collection[str] | None = None,
    steps: Mapping[str, Mapping[str, Collection[str] | None]] | None = None,
    answers: Mapping[str, Mapping[str, type[BaseModel] | None]] | None = None,
) -> list[QueueSpec]:
    """The queues of a YAML file's `queues:` section (none without one). `known_scorers` makes
    an unknown scorer an error at its line, `steps` (each scorer's steps, with the fields of
    each one's answer when known) an unknown step or answer field in `steps.answers` or
    `highlight`, and `answers` (each scorer's steps' answer models) choices that are not
    values of the field they label. Every problem of every queue is raised at once
    (CatalogErrors)."""
    written = data.get("queues")
    if written is None:
        return []
    if not isinstance(written, Mapping):
        try:
            _QueuesSection.model_validate({"queues": written})
        except ValidationError as exc:
            raise validation_error(exc, data, "", path, _QueuesSection) from None
    problems: list[ConfigError] = []
    queues = []
    for name, raw in written.items():
        try:
            queue = _QueuesSection.model_validate({"queues": {name: raw}}).queues[name]
        except ValidationError as exc:
            problems += validation_errors(exc, data, "", path, _QueuesSection)
            continue
        found = _queue_problems(data, path, name, queue, known_scorers, steps)
        if not found:
            model = (answers or {}).get(queue.scorer, {}).get(queue.steps.step) if queue.steps is not None else None
            facts = _label_facts(model, queue.steps)
            problem = first_problem(held("queues.*", f"queues.{name}", raw, facts), raw)
            if problem is not None:
                found = [ConfigError(problem[0], *(problem[1] or (path, None, None)))]
        problems += found
        if not found:
            queues.append(queue.model_copy(update={"name": name}))
    if problems:
        raise CatalogErrors(problems)
    return queues


def _label_facts(model: type[BaseModel] | None, labels: StepLabels | None) -> dict[str, Fact]:
    """What the settings table needs to know of the answer a queue's `steps:` labels."""
    return {
        "judged_values": lambda _: judged_values(model, labels),
        "entry_fields": lambda _: list(_entry(model, labels).get("properties", {})),
    }


def _entry(model: type[BaseModel] | None, labels: StepLabels | None) -> Mapping[str, Any]:
    """The JSON Schema of each entry of the answer list a queue's `steps:` labels ({} when unknown)."""
    if model is None or labels is None:
        return {}
    schema = model.model_json_schema()
    node: Any = schema.get("properties", {}).get(labels.field, {})
    node = node.get("items", {}) if isinstance(node, Mapping) else {}
    while isinstance(node, Mapping) and "$ref" in node:
        node = schema.get("$defs", {}).get(str(node["$ref"]).rsplit("/", 1)[-1], {})
    return node if isinstance(node, Mapping) else {}


def judged_values(model: type[BaseModel] | None, labels: StepLabels | None) -> list[Any] | None:
    """The values the judge may give in the field a queue's `steps:` labels (its enum), when known."""
    if labels is None or labels.judged is None:
        return None
    field = _entry(model, labels).get("properties", {}).get(labels.judged, {})
    values = field.get("enum") if isinstance(field, Mapping) else None
    return list(values) if isinstance(values, list) else None

def _queue_problems(
    data: Mapping[str, Any], path: Path, name: str, queue: QueueSpec,
    known_scorers: Collection[str] | None, steps: Mapping[str, Mapping[str, Collection[str] | None]] | None,
) -> list[ConfigError]:
    """What a queue names that its catalog does not have: its scorer, the step and answer
    field it labels, the step it highlights; each at its line."""
    if known_scorers is not None and queue.scorer not in known_scorers:
        file, line = locate(data, ["queues", name, "scorer"])
        return [ConfigError(f"queues.{name}.scorer: unknown scorer {queue.scorer!r}{did_you_mean(queue.scorer, list(known_scorers))}", file or path, line)]
    own_steps = (steps or {}).get(queue.scorer)
    if own_steps is None:
        return []
    problems = []
    for key, where in (("steps", queue.steps.step if queue.steps else None), ("highlight", queue.highlight.split(".")[0] if queue.highlight else None)):
        if where is not None and where not in own_steps:
            file, line = locate(data, ["queues", name, key, "answers"] if key == "steps" else ["queues", name, key])
            problems.append(ConfigError(
                f"queues.{name}.{key}: {queue.scorer} has no step {where!r}{did_you_mean(where, list(own_steps))} (its steps: {', '.join(own_steps)})",
                file or path,
                line,
            ))
    fields = own_steps.get(queue.steps.step) if queue.steps else None
    if queue.steps is not None and fields is not None and queue.steps.field not in fields:
        file, line = locate(data, ["queues", name, "steps", "answers"])
        problems.append(ConfigError(
            f"queues.{name}.steps.answers: step {queue.steps.step!r} answers no field {queue.steps.field!r}"
            f"{did_you_mean(queue.steps.field, list(fields))} (its fields: {', '.join(fields) or 'none'})",
            file or path,
            line,
        ))
    return problems


def load_queues(path: str | Path) -> list[QueueSpec]:
    """The queues of a YAML file's `queues:` section, scorers unchecked."""
    path = Path(path)
    data = load_yaml(path)
    if not isinstance(data, Mapping):
        raise ConfigError("expected a mapping with a `queues:` section", path)
    return queues_in(data, path)

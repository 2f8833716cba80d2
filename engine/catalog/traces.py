"""Which spans of an app's OpenTelemetry traces are scored, and how their attributes become an
item's input, output, context and tool calls: a catalog's `traces:` section, checked at load
like everything else (FILE:LINE):

    traces:
      convention: openinference      # genai (gen_ai.*), openinference, or vercel (ai.*: Vercel AI SDK, Mastra)
      llm:                           # each LLM span is an item for these scorers
        scorers: [hallucination]
      agent:                         # each root span with LLM, tool or retrieval spans under it
        scorers: [tool-correctness]
        fields:                      # the preset's reading of a field, replaced (JMESPath)
          input: 'attributes."input.value"'
      sampling: 0.2                  # one rate, or a rate per scorer; decided by the trace id
      where:                         # only spans whose attributes (or resource's) equal these
        service.name: checkout
      export: http://127.0.0.1:4318/v1/traces   # scores sent back as spans of the scored trace

A convention is data: which attribute says what a span is (`kind`), and per kind of span a
JMESPath expression per field, read over the span as `{name, attributes, events, resource}`.
Attribute values that hold JSON (a list of messages) are read as JSON; attributes flattened
with indexes (`llm.input_messages.0.message.content`) are read as lists
(`attributes."llm.input_messages"[0]."message.content"`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..errors import ConfigError
from .source import locate, position, validation_error
from .suggest import did_you_mean

if TYPE_CHECKING:
    from ..scoring.plan import ScorerPlan

SpanKind = Literal["llm", "retrieval", "tool", "agent"]
#: The fields a mapping may read, per kind of span.
FIELDS: dict[str, tuple[str, ...]] = {
    "llm": ("input", "output", "tool_calls", "context"),
    "retrieval": ("documents",),
    "tool": ("name", "arguments", "result"),
    "agent": ("input", "output"),
}


class Convention(BaseModel):
    """How one instrumentation convention writes spans (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = Field(description="JMESPath giving the span's kind as the convention names it")
    kinds: dict[str, SpanKind] = Field(description="The convention's names of kinds, as llm, retrieval, tool or agent")
    fields: dict[SpanKind, dict[str, str]] = Field(description="Per kind: field -> JMESPath")
    hidden_content: str = Field(default="", description="Why the convention's instrumentations may leave message content out, and the switch")


_OI_USER = 'attributes."llm.input_messages"[?"message.role"==\'user\'] | [-1]."message.content"'
_GENAI_TEXT = "[-1].parts[?type=='text'].content | join('', @ || `[]`)"
_GENAI_USER = f"attributes.\"gen_ai.input.messages\"[?role=='user'] | {_GENAI_TEXT}"
_GENAI_OUTPUT = f"attributes.\"gen_ai.output.messages\" | {_GENAI_TEXT}"

#: The presets: the GenAI semantic conventions, OpenInference, and the Vercel AI SDK's `ai.*`
#: (which Mastra's telemetry writes too).
PRESETS: dict[str, Convention] = {
    "genai": Convention(
        kind='attributes."gen_ai.operation.name"',
        kinds={"chat": "llm", "text_completion": "llm", "generate_content": "llm", "retrieval": "retrieval", "execute_tool": "tool", "invoke_agent": "agent"},
        fields={
            "llm": {
                # Content on the span (the latest conventions), else in its events (the earlier ones).
                "input": f"({_GENAI_USER}) || (events[?name=='gen_ai.user.message'] | [-1].attributes.content)",
                "output": f"({_GENAI_OUTPUT}) || (events[?name=='gen_ai.choice'] | [-1].attributes.message.content)",
                "tool_calls": "attributes.\"gen_ai.output.messages\"[-1].parts[?type=='tool_call'].{name: name, arguments: arguments}",
            },
            "retrieval": {"documents": 'attributes."gen_ai.retrieval.documents"[].content'},
            "tool": {"name": 'attributes."gen_ai.tool.name"', "arguments": 'attributes."gen_ai.tool.call.arguments"', "result": 'attributes."gen_ai.tool.call.result"'},
            "agent": {"input": _GENAI_USER, "output": _GENAI_OUTPUT},
        },
        hidden_content=(
            "OpenTelemetry's GenAI instrumentations leave message content off spans unless told: "
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental"
        ),
    ),
    "openinference": Convention(
        kind='attributes."openinference.span.kind"',
        kinds={"LLM": "llm", "RETRIEVER": "retrieval", "TOOL": "tool", "AGENT": "agent", "CHAIN": "agent"},
        fields={
            "llm": {
                "input": _OI_USER,
                "output": 'attributes."llm.output_messages"[-1]."message.content"',
                "tool_calls": 'attributes."llm.output_messages"[-1]."message.tool_calls"[].{name: "tool_call.function.name", arguments: "tool_call.function.arguments"}',
            },
            "retrieval": {"documents": 'attributes."retrieval.documents"[]."document.content"'},
            "tool": {"name": 'attributes."tool.name"', "arguments": 'attributes."tool.parameters" || attributes."input.value"', "result": 'attributes."output.value"'},
            "agent": {"input": 'attributes."input.value"', "output": 'attributes."output.value"'},
        },
        hidden_content="OpenInference leaves content out where OPENINFERENCE_HIDE_INPUTS, OPENINFERENCE_HIDE_OUTPUTS or the HIDE_*_MESSAGES variables say so",
    ),
    "vercel": Convention(
        kind='attributes."ai.operationId"',
        kinds={
            "ai.generateText.doGenerate": "llm", "ai.streamText.doStream": "llm", "ai.generateObject.doGenerate": "llm",
            "ai.toolCall": "tool", "ai.generateText": "agent", "ai.streamText": "agent", "ai.generateObject": "agent",
        },
        fields={
            "llm": {
                "input": "attributes.\"ai.prompt.messages\"[?role=='user'] | [-1].content",
                "output": 'attributes."ai.response.text" || attributes."ai.response.object"',
                "tool_calls": 'attributes."ai.response.toolCalls"[].{name: toolName, arguments: args || input}',
                # The tool results the call was given (its prompt's tool messages): no retrieval
                # spans, the tools are where the answer's facts come from.
                "context": "map(&{tool: toolName, result: output.value || result}, attributes.\"ai.prompt.messages\"[?role=='tool'].content[])",
            },
            "retrieval": {},
            "tool": {"name": 'attributes."ai.toolCall.name"', "arguments": 'attributes."ai.toolCall.args" || attributes."ai.toolCall.input"',
                     "result": 'attributes."ai.toolCall.result" || attributes."ai.toolCall.output"'},
            "agent": {"input": 'attributes."ai.prompt".prompt || attributes."ai.prompt".messages[-1].content', "output": 'attributes."ai.response.text"'},
        },
        hidden_content="The AI SDK records inputs and outputs unless experimental_telemetry sets recordInputs or recordOutputs to false",
    ),
}


class ItemsOf(BaseModel):
    """One kind of item: the scorers it goes to and, optionally, fields read otherwise than the preset."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scorers: list[str] = Field(min_length=1, description="The scorers each such item is scored by")
    fields: dict[str, str] = Field(default_factory=dict, description="Field -> JMESPath over {name, attributes, events, resource}, replacing the preset's")


class TracesSpec(BaseModel):
    """A catalog's `traces:` section; see the module docstring."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    convention: Literal["genai", "openinference", "vercel"] = Field(description="The preset: how the app's instrumentation writes spans")
    llm: ItemsOf | None = Field(default=None, description="Each LLM span is an item for these scorers (its retrieval spans' documents are its context)")
    agent: ItemsOf | None = Field(default=None, description="Each root span with LLM, tool or retrieval spans under it is an item (a whole agent run)")
    sampling: Union[float, dict[str, float]] = Field(default=1.0, description="A rate for every scorer, or per scorer; decided by the trace id")
    where: dict[str, Union[str, int, float, bool]] = Field(default_factory=dict, description="Only spans whose attribute (or resource attribute) equals each of these")
    export: str | None = Field(default=None, description="An OTLP/HTTP traces endpoint the scores are sent to, as spans of the scored traces")

    @field_validator("sampling")
    @classmethod
    def _rates(cls, value: float | dict[str, float]) -> float | dict[str, float]:
        for rate in value.values() if isinstance(value, dict) else [value]:
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"a sampling rate is between 0 and 1, got {rate:g}")
        return value

    @field_validator("export")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"export {value!r}: an OTLP/HTTP endpoint, e.g. http://127.0.0.1:4318/v1/traces")
        return value

    @property
    def preset(self) -> Convention:
        return PRESETS[self.convention]

    def fields(self, kind: SpanKind) -> dict[str, str]:
        """What each field of a span of `kind` is read by: the preset's, then the section's own."""
        own = self.llm if kind == "llm" else self.agent if kind == "agent" else None
        return {**self.preset.fields.get(kind, {}), **(own.fields if own is not None else {})}

    def scorer_ids(self) -> list[str]:
        ids = [*(self.llm.scorers if self.llm else []), *(self.agent.scorers if self.agent else [])]
        return list(dict.fromkeys(ids))


class _TracesSection(BaseModel):
    traces: TracesSpec


def traces_in(data: Mapping[str, Any], path: Path, known_scorers: Collection[str] | None = None) -> TracesSpec | None:
    """The `traces:` section of a YAML file (None without one); an unknown scorer, field or a
    JMESPath expression that does not compile is an error at its line."""
    if data.get("traces") is None:
        return None
    try:
        spec = _TracesSection.model_validate({"traces": data["traces"]}).traces
    except ValidationError as exc:
        raise validation_error(exc, data, "", path, _TracesSection) from None
    if spec.llm is None and spec.agent is None:
        file, line = locate(data, ["traces"])
        raise ConfigError("traces: give `llm:` or `agent:` (or both), with the scorers their items go to", file or path, line)
    for kind in ("llm", "agent"):
        items: ItemsOf | None = getattr(spec, kind)
        if items is None:
            continue
        for index, scorer in enumerate(items.scorers):
            if known_scorers is not None and scorer not in known_scorers:
                file, line = locate(data, ["traces", kind, "scorers", index])
                raise ConfigError(f"traces.{kind}.scorers: unknown scorer {scorer!r}{did_you_mean(scorer, list(known_scorers))}", file or path, line)
        for name, expression in items.fields.items():
            file, line = locate(data, ["traces", kind, "fields", name])
            if name not in FIELDS[kind]:
                raise ConfigError(f"traces.{kind}.fields: unknown field {name!r}{did_you_mean(name, list(FIELDS[kind]))} (a {kind} span has {', '.join(FIELDS[kind])})", file or path, line)
            problem = expression_problem(expression)
            if problem:
                raise ConfigError(f"traces.{kind}.fields.{name}: {problem}", file or path, line)
    if isinstance(spec.sampling, dict):
        for scorer in spec.sampling:
            if scorer not in spec.scorer_ids():
                file, line = locate(data, ["traces", "sampling", scorer])
                raise ConfigError(f"traces.sampling: {scorer!r} is not among the scorers of llm: or agent:", file or path, line)
    return spec


def expression_problem(expression: str) -> str | None:
    """Why a JMESPath expression does not compile, or None."""
    import jmespath
    from jmespath.exceptions import JMESPathError

    try:
        jmespath.compile(expression)
    except JMESPathError as exc:
        return f"not a JMESPath expression: {str(exc).splitlines()[0]}"
    return None


def trace_warnings(data: Mapping[str, Any], path: Path, plan_of: Callable[[str], ScorerPlan | None]) -> list[ConfigError]:
    """The warnings of the `traces:` section's settings (their rows in setting_rules.py): a
    scorer given items that never hold what it reads, a field read from the attribute of
    another, a rate against its comment; its problems are traces_in's."""
    from .setting_checks import block_said, held
    from .trace_relations import attributes_read
    from .warning import CatalogWarning

    section = data.get("traces")
    if not isinstance(section, Mapping):
        return []
    convention = str(section.get("convention", ""))
    readers: dict[str, set[str]] = {}
    for fields in PRESETS[convention].fields.values() if convention in PRESETS else ():
        for field, expression in fields.items():
            for attribute in attributes_read(expression):
                readers.setdefault(attribute, set()).add(field)

    def run_reads(loc: tuple[Any, ...]) -> tuple[frozenset[str], tuple[str, ...]] | None:
        plan = plan_of(str(section[loc[0]][loc[1]][loc[2]]))
        if plan is None:
            return None
        return frozenset().union(*(step.reads for step in plan.steps)), tuple(plan.requires)

    preset = PRESETS[convention].fields if convention in PRESETS else {}
    said = block_said(data, "traces", header=True)
    facts = {"run_reads": run_reads, "convention": lambda _: (convention, readers, preset), "said_of_owner": lambda _: said}
    found: list[ConfigError] = []
    for each in held("traces", "traces", section, facts):
        if each.code is not None:
            place = position(section, list(each.loc), value=True)
            found.append(CatalogWarning(each.message, *(place or (str(path), None, None)), code=each.code))
    return found

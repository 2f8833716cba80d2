"""What a scorer asks of a judge, and what it gets back. Everything that stands between a
scorer and a provider (the provider adapters, a preview's given answers, each middleware)
speaks this protocol, so a cache or a limiter wraps a call without the scorer knowing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from ..errors import ConfigError
from .config import Sampling


class TokenUsage(BaseModel):
    """Tokens of one or more judge calls, as the provider reported them. `cached_prompt_tokens`
    (part of `prompt_tokens`) were served from the provider's prompt-prefix cache and are
    billed lower; `reasoning_tokens` (part of `completion_tokens`) were spent thinking."""

    prompt_tokens: int = 0
    completion_tokens: int = Field(default=0, description="Output tokens, thinking included")
    total_tokens: int = 0
    cached_prompt_tokens: int = Field(default=0, description="Of the prompt tokens, those served from the provider's prompt-prefix cache")
    reasoning_tokens: int = Field(default=0, description="Of the completion tokens, those a reasoning model spent thinking")

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cached_prompt_tokens=self.cached_prompt_tokens + other.cached_prompt_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )


#: Where a verdict's probabilities came from: the judge's token log-probabilities, or the
#: share of repeated samples that gave each value.
ProbabilitySource = Literal["logprobs", "samples"]


class FieldProbabilities(BaseModel):
    """How likely each value the schema allows was, at one field of a structured answer
    (`verdict`, `verdicts[2].verdict`, `rating`): `values[i]` had `probabilities[i]`; the
    answer gave `chosen`. A number field has `expected`, its probability-weighted mean."""

    field: str
    chosen: Any
    values: list[Any]
    probabilities: list[float]
    expected: float | None = None
    source: ProbabilitySource = "logprobs"

    def probability(self, value: Any) -> float:
        """The probability of `value` (0 when the schema allows it but no candidate gave it)."""
        for known, probability in zip(self.values, self.probabilities):
            if known == value and type(known) is type(value):
                return probability
        return 0.0


@dataclass(frozen=True)
class JudgeRequest:
    """One question for the judge: the rendered messages of a step, how to sample, and the
    model its answer must validate against (None: free text). `sample` numbers repeated
    judgements of the same request (`eval --repeat`): a response cache keys on it, so each
    repeat is a distinct sample while a rerun of the same repeat is served again."""

    messages: list[dict[str, str]]
    sampling: Sampling
    step: str
    response_model: type[BaseModel] | None = None
    #: Which of several samples of the same question this is (0 for the first): a cache
    #: keeps them apart, so asking for a second opinion is never served the first one.
    sample: int = 0


@dataclass(frozen=True)
class JudgeAnswer:
    value: Any
    usage: TokenUsage | None = None
    #: True when no provider was paid for it (a response cache answered).
    cached: bool = False
    #: True when it was asked through the provider's Batch API (billed at its batch price).
    batch: bool = False
    #: What a reasoning model thought before answering (taken out of the answer before validation).
    thinking: str | None = None
    #: For each enum, boolean and small-number field of a structured answer, how likely each
    #: allowed value was (None: the judge gave no log-probabilities and none were sampled).
    probabilities: tuple[FieldProbabilities, ...] | None = None


class AsksJudge(Protocol):
    """What a scorer needs from a judge. A judge may also have an `identity` (a dict of what
    decides its answers besides the request: model, endpoint, structured-output mode); a
    response cache serves only judges that have one."""

    @property
    def model(self) -> str: ...

    async def ask(self, request: JudgeRequest) -> JudgeAnswer: ...


class NoJudge:
    """The judge of a scorer made only of computed steps: it has no model and is never asked,
    so such a scorer needs no model, no key and no network."""

    model = "none"

    async def ask(self, request: JudgeRequest) -> JudgeAnswer:
        raise ConfigError(f"step {request.step!r} asks a judge, but this scorer was created without one")


#: The rest of the chain, as a middleware sees it.
CallNext = Callable[[JudgeRequest], Awaitable[JudgeAnswer]]


class JudgeMiddleware(Protocol):
    """One cross-cutting concern of judge calls (a cache, a limiter, a cost meter, a tracer):
    it sees each request and decides whether and how to pass it on."""

    async def __call__(self, request: JudgeRequest, call_next: CallNext) -> JudgeAnswer: ...

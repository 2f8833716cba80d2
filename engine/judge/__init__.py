"""The only layer that talks to a provider: judge configuration, the judge protocol, the
provider adapters and the middleware chain around them."""

from __future__ import annotations

from .capabilities import capabilities
from .client import OpenAIJudge
from .config import PROVIDERS, JudgeConfig, Provider, Sampling, StructuredMode, resolve_judge
from .middleware import Chain
from .protocol import AsksJudge, CallNext, JudgeAnswer, JudgeMiddleware, JudgeRequest, TokenUsage


def connect(config: JudgeConfig) -> AsksJudge:
    """The judge a scorer calls for `config`: the adapter its provider speaks (OpenAI's API,
    Azure's, or Anthropic's). The provider SDK is imported on the first call."""
    if config.provider_preset().adapter == "anthropic":
        from .anthropic import AnthropicJudge

        return AnthropicJudge(config)
    return OpenAIJudge(config)


__all__ = [
    "AsksJudge",
    "CallNext",
    "Chain",
    "JudgeAnswer",
    "JudgeConfig",
    "JudgeMiddleware",
    "JudgeRequest",
    "OpenAIJudge",
    "PROVIDERS",
    "Provider",
    "Sampling",
    "StructuredMode",
    "TokenUsage",
    "capabilities",
    "connect",
    "resolve_judge",
]

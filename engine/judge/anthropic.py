"""Where the judge is called over Anthropic's Messages API: Claude through the `anthropic`
SDK (the optional extra `llm-scorers[anthropic]`), structured answers through Instructor's
Anthropic support (tool use, or JSON in the text), the same re-asks, usage and typed errors
as the OpenAI adapter.

Only parameters that the installed SDK's `messages.create` accepts are sent (its signature
is read, not assumed), and a parameter a model refuses with a 400 is left out from then on.
"""

from __future__ import annotations

import inspect
import time
from functools import cache
from typing import Any

from ..errors import ConfigError, JudgeRequestError
from .capabilities import capabilities, refused_parameter
from .client import (
    _MAX_ADJUSTMENTS,
    ResponseObserver,
    _joined,
    _wanted,
    observing_http_client,
    shared_client,
)
from .config import JudgeConfig
from .failures import cause_of, error_message, error_param, judge_error
from .protocol import JudgeAnswer, JudgeRequest, TokenUsage

INSTALL = 'pip install "llm-scorers[anthropic]"'
#: The Messages API requires a limit; this one leaves room for long verdict lists.
DEFAULT_MAX_TOKENS = 4096


def _sdk() -> Any:
    try:
        import anthropic
    except ImportError:
        raise ConfigError(f"anthropic/ judges need the anthropic SDK: {INSTALL}") from None
    return anthropic


@cache
def accepted_parameters() -> frozenset[str]:
    """The keyword arguments the installed SDK's `messages.create` takes."""
    from anthropic.resources.messages import AsyncMessages

    return frozenset(inspect.signature(AsyncMessages.create).parameters) - {"self"}


class AnthropicJudge:
    """Asks one Claude model for validated answers. `observe_responses` is told about every
    HTTP response (a rate limiter reads 429s and rate-limit headers there)."""

    def __init__(self, config: JudgeConfig, observe_responses: ResponseObserver | None = None) -> None:
        config.check()
        self.config = config
        self.observe_responses = observe_responses

    @property
    def model(self) -> str:
        return self.config.model

    @property
    def identity(self) -> dict[str, Any]:
        return self.config.identity()

    def _clients(self) -> tuple[Any, Any, str]:
        """(the SDK client, the Instructor client, the key) for this loop."""
        anthropic = _sdk()
        import instructor

        base_url, key = self.config.endpoint()
        config = self.config
        mode = instructor.Mode.JSON if config.structured_mode in ("json", "md_json") else instructor.Mode.TOOLS
        sdk = shared_client(
            ("anthropic", base_url, key, config.timeout, config.http_retries, self.observe_responses),
            lambda: anthropic.AsyncAnthropic(
                api_key=key, base_url=base_url, timeout=config.timeout, max_retries=config.http_retries, http_client=observing_http_client(anthropic, self.observe_responses)
            ),
        )
        structured = shared_client(
            ("anthropic-instructor", base_url, key, config.timeout, config.http_retries, mode, self.observe_responses),
            lambda: instructor.from_anthropic(sdk, mode=mode),
        )
        return sdk, structured, key

    def _parameters(self, request: JudgeRequest, where: str) -> dict[str, Any]:
        wanted = _wanted(request)
        wanted["max_tokens"] = wanted.get("max_tokens") or DEFAULT_MAX_TOKENS
        accepted = accepted_parameters()
        learned = capabilities.parameters(where, self.config.model_name, wanted)
        return {name: value for name, value in learned.items() if name in accepted}

    async def ask(self, request: JudgeRequest) -> JudgeAnswer:
        anthropic = _sdk()
        where, model = self.config.where(), self.config.model_name
        key = ""
        started = time.monotonic()
        for _ in range(_MAX_ADJUSTMENTS):
            parameters = self._parameters(request, where)
            try:
                sdk, structured, key = self._clients()
                if request.response_model is None:
                    return await self._text(sdk, request, parameters)
                return await self._structured(structured, request, parameters)
            except ConfigError:
                raise
            except Exception as exc:
                cause = cause_of(exc)
                if isinstance(cause, anthropic.BadRequestError):
                    refused = refused_parameter(error_message(cause), error_param(cause), parameters)
                    if refused is not None and refused != "max_tokens":
                        capabilities.refuse(where, model, refused)
                        continue
                raise judge_error(exc, self.config, key, request, anthropic, time.monotonic() - started) from exc
        raise JudgeRequestError(f"the judge at {where} kept refusing the request after {_MAX_ADJUSTMENTS} adjustments", request.step)

    async def _text(self, sdk: Any, request: JudgeRequest, parameters: dict[str, Any]) -> JudgeAnswer:
        system = "\n\n".join(message["content"] for message in request.messages if message["role"] == "system")
        messages = [message for message in request.messages if message["role"] != "system"]
        extra = {"system": system} if system else {}
        message = await sdk.messages.create(model=self.config.model_name, messages=messages, **extra, **parameters)
        text = "".join(block.text for block in message.content if getattr(block, "type", None) == "text")
        return JudgeAnswer(value=text.strip(), usage=_usage(message), thinking=_thinking(message))

    async def _structured(self, client: Any, request: JudgeRequest, parameters: dict[str, Any]) -> JudgeAnswer:
        from instructor.core.hooks import Hooks

        thoughts: list[str | None] = [None]
        hooks = Hooks()
        hooks.on("completion:response", lambda message: thoughts.__setitem__(0, _thinking(message)))
        value, message = await client.create_with_completion(
            model=self.config.model_name,
            messages=request.messages,
            response_model=request.response_model,
            max_retries=request.sampling.reasks,
            hooks=hooks,
            **parameters,
        )
        return JudgeAnswer(value=value, usage=_usage(message), thinking=thoughts[0])


def _thinking(message: Any) -> str | None:
    """Extended thinking blocks (their text, never the signature)."""
    blocks = getattr(message, "content", None) or []
    return _joined(*(getattr(block, "thinking", None) for block in blocks if getattr(block, "type", None) == "thinking"))


def _usage(message: Any) -> TokenUsage | None:
    usage = getattr(message, "usage", None)
    if usage is None:
        return None
    cache_read = getattr(usage, "cache_read_input_tokens", None) or 0
    prompt = (usage.input_tokens or 0) + cache_read + (getattr(usage, "cache_creation_input_tokens", None) or 0)
    completion = usage.output_tokens or 0
    return TokenUsage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion, cached_prompt_tokens=cache_read)


__all__ = ["INSTALL", "AnthropicJudge", "accepted_parameters"]

"""Where the judge is called over Anthropic's Messages API: Claude through the `anthropic`
SDK (the optional extra `llm-scorers[anthropic]`), structured answers shaped, parsed and
re-asked with Instructor's Anthropic handlers (tool use, or JSON in the text), answers
streamed as the OpenAI adapter's are (a judge still writing is waited for, a silent one asked
again), the same usage and typed errors.

Only parameters that the installed SDK's `messages.create` accepts are sent (its signature
is read, not assumed), and a parameter a model refuses with a 400 is left out from then on.
"""

from __future__ import annotations

import inspect
import time
from functools import cache
from typing import Any

from ..errors import AnswerCutOffError, ConfigError, JudgeError, JudgeRequestError
from .capabilities import capabilities, refused_parameter
from .client import (
    MAX_ADJUSTMENTS,
    ResponseObserver,
    joined_text,
    judge_thinks,
    wanted_parameters,
    observing_http_client,
    shared_client,
    validated_answer,
)
from .config import JudgeConfig
from .cut_off import cut_off_message
from .failures import cause_of, error_message, error_param, judge_error, stopped_sending
from .protocol import JudgeAnswer, JudgeRequest, TokenUsage
from .streaming import StoppedSending, anthropic_message, streamed, whole_anthropic_message

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
        """(the SDK client, Instructor's mode for structured answers, the key) for this loop."""
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
        return sdk, mode, key

    def _parameters(self, request: JudgeRequest, where: str) -> dict[str, Any]:
        wanted = wanted_parameters(request, judge_thinks(request, where, self.config.model_name))
        wanted.pop("stream_options")  # the Messages API always streams its usage
        wanted["max_tokens"] = wanted.get("max_tokens") or DEFAULT_MAX_TOKENS
        accepted = accepted_parameters()
        learned = capabilities.parameters(where, self.config.model_name, wanted)
        return {name: value for name, value in learned.items() if name in accepted}

    async def ask(self, request: JudgeRequest) -> JudgeAnswer:
        anthropic = _sdk()
        where, model = self.config.where(), self.config.model_name
        key = ""
        started = time.monotonic()
        for _ in range(MAX_ADJUSTMENTS):
            parameters = self._parameters(request, where)
            try:
                sdk, mode, key = self._clients()
                if request.response_model is None:
                    return await self._text(sdk, request, parameters)
                return await self._structured(sdk, mode, request, parameters)
            except (ConfigError, JudgeError):
                raise
            except StoppedSending as stopped:
                raise stopped_sending(stopped, self.config, request) from None
            except Exception as exc:
                cause = cause_of(exc)
                if isinstance(cause, anthropic.BadRequestError):
                    refused = refused_parameter(error_message(cause), error_param(cause), parameters)
                    if refused is not None and refused != "max_tokens":
                        capabilities.refuse(where, model, refused)
                        continue
                raise judge_error(exc, self.config, key, request, anthropic, time.monotonic() - started) from exc
        raise JudgeRequestError(f"the judge at {where} kept refusing the request after {MAX_ADJUSTMENTS} adjustments", request.step)

    async def _complete(self, sdk: Any, kwargs: dict[str, Any]) -> Any:
        """One message, streamed when the request asks for it (see streaming.py)."""
        import anthropic
        import httpx2

        return await streamed(
            lambda: sdk.messages.with_streaming_response.create(**kwargs), anthropic_message, whole_anthropic_message,
            timeouts=(httpx2.TimeoutException, anthropic.APITimeoutError), silence=self.config.timeout, retries=self.config.http_retries, model=self.config.model,
        )

    async def _text(self, sdk: Any, request: JudgeRequest, parameters: dict[str, Any]) -> JudgeAnswer:
        system = "\n\n".join(message["content"] for message in request.messages if message["role"] == "system")
        messages = [message for message in request.messages if message["role"] != "system"]
        extra = {"system": system} if system else {}
        message = await self._complete(sdk, {"model": self.config.model_name, "messages": messages, **extra, **parameters})
        text = "".join(block.text for block in message.content if getattr(block, "type", None) == "text")
        if message.stop_reason == "max_tokens":
            raise AnswerCutOffError(cut_off_message(request, text, parameters.get("max_tokens")), request.step)
        return JudgeAnswer(value=text.strip(), usage=_usage(message), thinking=_thinking(message))

    async def _structured(self, sdk: Any, mode: Any, request: JudgeRequest, parameters: dict[str, Any]) -> JudgeAnswer:
        """The answer through Instructor's Anthropic handler for `mode`: the request shaped
        (the tool's schema is the answer model's, bounds included), each attempt validated,
        and a refused one asked again with the handler's re-ask, up to the step's re-asks."""
        import instructor.v2.providers.anthropic.handlers  # noqa: F401  (registers them)
        from instructor.v2.core.providers import Provider
        from instructor.v2.core.registry import mode_registry

        assert request.response_model is not None
        handlers = mode_registry.get_handlers(Provider.ANTHROPIC, mode)
        # Shaped without `stream`: the handler would take the answer for a stream of partial objects.
        sent = {name: value for name, value in parameters.items() if name != "stream"}
        response_model, kwargs = handlers.request_handler(request.response_model, {"model": self.config.model_name, "messages": list(request.messages), **sent})
        kwargs["stream"] = parameters.get("stream", False)
        answer_model = response_model or request.response_model

        def check_finished(message: Any, thinking: str | None) -> None:
            if message.stop_reason == "max_tokens":
                text = "".join(str(getattr(block, "text", "") or getattr(block, "input", "")) for block in message.content)
                raise AnswerCutOffError(cut_off_message(request, text, parameters.get("max_tokens")), request.step)

        def parse(message: Any) -> Any:
            return handlers.response_parser(response=message, response_model=answer_model, validation_context=None, strict=None, stream=False, is_async=True)

        return await validated_answer(
            request, kwargs, lambda sent: self._complete(sdk, sent), lambda message: (_thinking(message), _usage(message)), check_finished, parse, handlers.reask_handler,
        )


def _thinking(message: Any) -> str | None:
    """Extended thinking blocks (their text, never the signature)."""
    blocks = getattr(message, "content", None) or []
    return joined_text(*(getattr(block, "thinking", None) for block in blocks if getattr(block, "type", None) == "thinking"))


def _usage(message: Any) -> TokenUsage | None:
    usage = getattr(message, "usage", None)
    if usage is None:
        return None
    cache_read = getattr(usage, "cache_read_input_tokens", None) or 0
    prompt = (usage.input_tokens or 0) + cache_read + (getattr(usage, "cache_creation_input_tokens", None) or 0)
    completion = usage.output_tokens or 0
    return TokenUsage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion, cached_prompt_tokens=cache_read)


__all__ = ["INSTALL", "AnthropicJudge", "accepted_parameters"]

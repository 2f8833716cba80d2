"""Where the judge is called over the OpenAI API (OpenAI, Azure OpenAI, and every
OpenAI-compatible server): an Instructor client over the `openai` SDK, structured calls with
re-asks, token usage, and every failure turned into a typed, one-line `JudgeError` (failures.py).

Around the call: parameters a model refuses are left out, a refused structured-output mode
falls back to the next one, and a reasoning model's thinking is taken out of its answer
before validation (see capabilities.py). Instructor and openai are imported on the first
call, so that loading a catalog or starting the command line does not pay for them.

In the json_schema and tools modes the first attempt is shaped by Instructor (once per
answer model) but sent and validated here: Instructor's loop costs more CPU per call than
the engine's own work. An answer that fails goes back to Instructor, whose parser and
re-asks take it from there with the attempts left.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from ..errors import (
    AnswerCutOffError,
    ConfigError,
    InvalidAnswerError,
    JudgeError,
    JudgeRequestError,
)
from ..formatting import first_line, refusal
from .capabilities import capabilities, refused_parameter, refuses_mode, split_thinking
from .config import NO_KEY, JudgeConfig, StructuredMode
from .cut_off import cut_off_message
from .protocol import JudgeAnswer, JudgeRequest, TokenUsage
from .failures import cause_of, cut_text, error_message, error_param, judge_error
from ..scrub import install_log_filter, remember_secret

if TYPE_CHECKING:
    import instructor

#: Told the status and headers of every HTTP response (rate-limit headers, 429s), including
#: the responses the SDK retries on its own.
ResponseObserver = Callable[[int, Mapping[str, str]], None]

def observing_http_client(sdk: Any, observer: ResponseObserver | None) -> Any:
    """An HTTP client for `sdk` (the `openai` or `anthropic` module) that tells `observer`
    about every response; None (the SDK's own client) without an observer."""
    if observer is None:
        return None

    async def observe(response: Any) -> None:
        observer(response.status_code, response.headers)

    return sdk.DefaultAsyncHttpxClient(event_hooks={"response": [observe]})


# Clients hold connection pools bound to the event loop that created them, so they are
# shared per loop (every sync `run()` call gets a fresh loop).
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], Any]] = weakref.WeakKeyDictionary()

# Answer models as Instructor wants them, built once per model (see `_prepared`).
_prepared_models: weakref.WeakKeyDictionary[type[BaseModel], type[BaseModel]] = weakref.WeakKeyDictionary()

#: The most refusals (a parameter, a mode) one call learns from before it gives up.
_MAX_ADJUSTMENTS = 6


def shared_client(key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
    """The client for `key` on the running event loop, built once per loop."""
    per_loop = _clients.setdefault(asyncio.get_running_loop(), {})
    if key not in per_loop:
        per_loop[key] = build()
    return per_loop[key]


class OpenAIJudge:
    """Asks one model behind an OpenAI-compatible endpoint (or Azure OpenAI) for validated answers.
    `observe_responses` is told about every HTTP response (a rate limiter reads 429s and
    rate-limit headers there)."""

    def __init__(self, config: JudgeConfig, observe_responses: ResponseObserver | None = None) -> None:
        config.check()
        self.config = config
        self.observe_responses = observe_responses
        remember_secret(config.api_key.get_secret_value() if config.api_key else None)
        install_log_filter()

    @property
    def model(self) -> str:
        return self.config.model

    @property
    def identity(self) -> dict[str, Any]:
        return self.config.identity()

    def _http_client(self) -> Any:
        import openai

        return observing_http_client(openai, self.observe_responses)

    def _sdk(self, base_url: str | None, key: str) -> Any:
        import openai

        config = self.config
        if config.provider_preset().adapter == "azure":
            version = config.api_version or os.environ.get("OPENAI_API_VERSION")
            if not version:
                raise ConfigError(f"no Azure OpenAI API version for {config.model!r}: set OPENAI_API_VERSION (e.g. 2024-10-21)")
            return openai.AsyncAzureOpenAI(
                azure_endpoint=base_url or "", api_key=key, api_version=version, timeout=config.timeout, max_retries=config.http_retries,
                http_client=self._http_client(),
            )
        return openai.AsyncOpenAI(
            base_url=base_url, api_key=key, timeout=config.timeout, max_retries=config.http_retries, http_client=self._http_client()
        )

    def _client(self, mode: StructuredMode, base_url: str | None, key: str) -> instructor.AsyncInstructor:
        """The client for the endpoint and key `config.endpoint()` gave."""
        import instructor

        if key != NO_KEY:
            remember_secret(key)
        cache_key = ("openai", base_url, key, self.config.timeout, self.config.http_retries, self.config.api_version, mode, self.observe_responses)

        def build() -> Any:
            built = instructor.from_openai(self._sdk(base_url, key), mode=_instructor_mode(mode))
            install_log_filter()  # the SDKs' loggers exist now that they are imported
            return built

        client: instructor.AsyncInstructor = shared_client(cache_key, build)
        return client

    async def ask(self, request: JudgeRequest) -> JudgeAnswer:
        """The judge's answer: an instance of the request's response model, or text."""
        import openai

        config = self.config
        base_url, key = config.endpoint()  # once a call: it reads the environment
        where, model = base_url or config.provider, config.model_name
        mode = capabilities.mode(where, model, config.structured_mode)
        started = time.monotonic()
        for _ in range(_MAX_ADJUSTMENTS):
            parameters = capabilities.parameters(where, model, _wanted(request))
            try:
                return await self._ask(self._client(mode, base_url, key), request, parameters, mode)
            except (ConfigError, JudgeError):
                raise
            except Exception as exc:
                cause = cause_of(exc)
                if not isinstance(cause, openai.APIStatusError) or cause.status_code not in (400, 404, 422):
                    raise judge_error(exc, config, key, request, openai, time.monotonic() - started) from exc
                message, param = error_message(cause), error_param(cause)
                refused = refused_parameter(message, param, parameters)
                if refused is not None:
                    capabilities.refuse(where, model, refused)
                    continue
                following = capabilities.fall_back(where, model, mode, first_line(message)) if request.response_model and refuses_mode(mode, message, param) else None
                if following is None:
                    raise judge_error(exc, config, key, request, openai, time.monotonic() - started, mode) from exc
                mode = following
        raise JudgeRequestError(f"the judge at {where} kept refusing the request after {_MAX_ADJUSTMENTS} adjustments", request.step)

    async def _ask(self, client: instructor.AsyncInstructor, request: JudgeRequest, parameters: dict[str, Any], mode: StructuredMode) -> JudgeAnswer:
        if request.response_model is None:
            completion = await client.chat.completions.create(
                model=self.config.model_name, messages=request.messages, response_model=None, **parameters  # type: ignore[arg-type]
            )
            choice = completion.choices[0]
            if choice.finish_reason == "length":
                raise AnswerCutOffError(cut_off_message(request, choice.message.content), request.step)
            message = choice.message
            text, thinking = split_thinking(message.content or "")
            return JudgeAnswer(value=text, usage=_usage(completion), thinking=_joined(_reasoning_field(message), thinking))
        if mode in _DIRECT_MODES:
            return await self._ask_directly(client, request, parameters, mode)
        return await self._ask_instructor(client, request, request.messages, parameters, request.sampling.reasks)

    async def _ask_instructor(
        self, client: instructor.AsyncInstructor, request: JudgeRequest, messages: list[Any], parameters: dict[str, Any], reasks: int
    ) -> JudgeAnswer:
        from instructor.core.hooks import Hooks

        assert request.response_model is not None
        thoughts: list[str | None] = [None]

        def take_thinking(completion: Any) -> None:
            # Before Instructor validates the answer: the thinking is not part of it.
            thoughts[0] = _strip_thinking(completion)

        hooks = Hooks()
        hooks.on("completion:response", take_thinking)
        value, completion = await client.chat.completions.create_with_completion(
            model=self.config.model_name,
            messages=messages,
            response_model=_prepared(request.response_model),
            max_retries=reasks,  # Instructor's count of re-asks after the first attempt
            hooks=hooks,
            **parameters,
        )
        return JudgeAnswer(value=value, usage=_usage(completion), thinking=thoughts[0])

    async def _ask_directly(
        self, client: instructor.AsyncInstructor, request: JudgeRequest, parameters: dict[str, Any], mode: StructuredMode
    ) -> JudgeAnswer:
        """The first attempt without Instructor's per-call machinery (it walks the answer
        model for async validators and builds a retry loop on every call, which cost more CPU
        than the engine's own work): the request as Instructor shapes it for `mode`, built
        once per answer model, and the answer validated against the answer model. What does
        not pass goes to Instructor as it would: its parser on the same completion, then its
        re-asks, with the attempts left."""
        from instructor.core.exceptions import InstructorError, InstructorRetryException
        from instructor.v2.core.registry import mode_registry

        assert request.response_model is not None
        prepared = _prepared(request.response_model)
        handlers = mode_registry.get_handlers(client.provider, _instructor_mode(mode))
        kwargs: dict[str, Any] = {"model": self.config.model_name, "messages": request.messages, **parameters, **_shaped(prepared, handlers, (client.provider, mode))}
        sdk = client.client
        assert sdk is not None  # Instructor's client over an SDK client always holds it
        completion = await sdk.chat.completions.create(**kwargs)
        thinking = _strip_thinking(completion)
        usage = _usage(completion)
        choice = completion.choices[0]
        if choice.finish_reason == "length":
            raise AnswerCutOffError(cut_off_message(request, cut_text(choice.message)), request.step)
        try:
            return JudgeAnswer(value=prepared.model_validate_json(_answer_text(choice.message, mode)), usage=usage, thinking=thinking)
        except (ValidationError, ValueError) as refused:
            try:
                value = handlers.response_parser(
                    response=completion, response_model=prepared, validation_context=None, strict=None, stream=False, is_async=True
                )
                return JudgeAnswer(value=value, usage=usage, thinking=thinking)
            except (ValidationError, ValueError, InstructorError):
                pass
            if request.sampling.reasks < 1:
                raise InvalidAnswerError(f"the judge's answer failed validation after 1 attempt(s): {_refusal_of(refused)}", request.step) from None
            asked_again = handlers.reask_handler(kwargs=kwargs, response=completion, exception=refused)
            try:
                answer = await self._ask_instructor(client, request, asked_again["messages"], parameters, request.sampling.reasks - 1)
            except InstructorRetryException as failed:
                failed.n_attempts += 1  # the first attempt was made here
                raise
            return JudgeAnswer(value=answer.value, usage=_added(usage, answer.usage), thinking=_joined(thinking, answer.thinking))


#: The structured modes whose first attempt is sent and validated without Instructor's loop.
_DIRECT_MODES: frozenset[StructuredMode] = frozenset({"json_schema", "tools"})

# What Instructor adds to a request for an answer model in a mode (a response format, or a
# tool and the choice of it), worked out once per model and mode.
_shapes: weakref.WeakKeyDictionary[type[BaseModel], dict[Any, dict[str, Any]]] = weakref.WeakKeyDictionary()


def _shaped(prepared: type[BaseModel], handlers: Any, shape: tuple[Any, StructuredMode]) -> dict[str, Any]:
    """`shape`: the provider and mode `handlers` are for."""
    per_shape = _shapes.get(prepared)
    if per_shape is None:  # not setdefault: a weak dictionary's is a slow walk in Python, and this runs on every call
        per_shape = _shapes[prepared] = {}
    if shape not in per_shape:
        _, shaped = handlers.request_handler(prepared, {})
        shaped.pop("messages", None)  # these modes say what they want outside the messages
        per_shape[shape] = shaped
    return per_shape[shape]


@functools.cache
def _instructor_mode(mode: StructuredMode) -> Any:
    import instructor

    modes = {"json_schema": instructor.Mode.JSON_SCHEMA, "tools": instructor.Mode.TOOLS, "json": instructor.Mode.JSON, "md_json": instructor.Mode.MD_JSON}
    return modes[mode]


def _answer_text(message: Any, mode: StructuredMode) -> str:
    """The JSON of a structured answer: the tool call's arguments, or the message's text."""
    if mode == "tools":
        calls = message.tool_calls or []
        if len(calls) != 1:
            raise ValueError(f"expected one tool call, got {len(calls)}")
        return str(calls[0].function.arguments)
    if not message.content:
        raise ValueError("the answer is empty")
    return str(message.content)


def _refusal_of(error: Exception) -> str:
    return refusal(error) if isinstance(error, ValidationError) else first_line(str(error))


def _added(first: TokenUsage | None, second: TokenUsage | None) -> TokenUsage | None:
    if first is None or second is None:
        return first or second
    return first + second


def _prepared(model: type[BaseModel]) -> type[BaseModel]:
    """`model` as Instructor would wrap it on every call (its `openai_schema`), with its JSON
    schema generated once: a profile showed Instructor re-creating the wrapper class and
    regenerating the schema for each request, the largest part of the work around a call
    after the HTTP client's."""
    prepared = _prepared_models.get(model)
    if prepared is None:
        import instructor

        wrapped = instructor.openai_schema(model)
        schema = wrapped.model_json_schema()

        class Prepared(wrapped):  # type: ignore[valid-type,misc]
            @classmethod
            def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
                # The default arguments are the ones Instructor asks with; others are rare. A
                # shallow copy, as Instructor makes of its own cached schemas: it sets keys at
                # the top level only.
                return dict(schema) if not args and not kwargs else wrapped.model_json_schema(*args, **kwargs)

        # The request names the schema after the class: keep the author's name.
        Prepared.__name__ = Prepared.__qualname__ = model.__name__
        Prepared.__doc__ = model.__doc__
        prepared = _prepared_models[model] = Prepared
    return prepared


def _wanted(request: JudgeRequest) -> dict[str, Any]:
    """The sampling parameters a request would send, before any model refuses some."""
    return {name: value for name, value in request.sampling.model_dump(exclude={"reasks"}).items() if value is not None}


def _reasoning_field(message: Any) -> str | None:
    """`reasoning_content` (vLLM, DeepSeek, llama.cpp) or `reasoning` (Ollama, OpenRouter)."""
    extra = getattr(message, "model_extra", None) or {}
    for name in ("reasoning_content", "reasoning"):
        value = extra.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _joined(*parts: str | None) -> str | None:
    text = "\n\n".join(part for part in parts if part)
    return text or None


def _strip_thinking(completion: Any) -> str | None:
    """Takes `<think>` blocks out of each choice's content, in place; returns the thinking."""
    found: list[str | None] = []
    for choice in getattr(completion, "choices", None) or []:
        message = choice.message
        found.append(_reasoning_field(message))
        if isinstance(message.content, str) and "think>" in message.content:
            message.content, thinking = split_thinking(message.content)
            found.append(thinking)
    return _joined(*found)


def _usage(completion: Any) -> TokenUsage | None:
    usage = getattr(completion, "usage", None)
    if usage is None:
        return None
    # OpenAI reports the prompt tokens served from its prefix cache and the thinking tokens
    # of reasoning models in these details; other servers may leave them out.
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    completion_details = getattr(usage, "completion_tokens_details", None)
    return TokenUsage(
        prompt_tokens=usage.prompt_tokens or 0,
        completion_tokens=usage.completion_tokens or 0,
        total_tokens=usage.total_tokens or 0,
        cached_prompt_tokens=getattr(prompt_details, "cached_tokens", None) or 0,
        reasoning_tokens=getattr(completion_details, "reasoning_tokens", None) or 0,
    )

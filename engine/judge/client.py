"""Where the judge is called over the OpenAI API (OpenAI, Azure OpenAI, and every
OpenAI-compatible server): the `openai` SDK with Instructor's request shapes, parsers and
re-asks, token usage, and every failure turned into a typed, one-line `JudgeError`
(failures.py).

Around the call: parameters a model refuses are left out, a refused structured-output mode
falls back to the next one, and a reasoning model's thinking is taken out of its answer
before validation (see capabilities.py). Answers are streamed (streaming.py), so a slow
judge that is still writing is waited for and a silent one is asked again. Instructor and
openai are imported on the first call, so that loading a catalog or starting the command
line does not pay for them.

Each attempt is shaped by Instructor's handler for the mode (in json_schema and tools modes
once per answer model, the request's bounds written into the schema), sent and read here,
validated against the request's answer model (its bounds and rules included), and a refused
answer is asked again with Instructor's re-ask message, up to the step's re-asks; what the
user then reads is one line in the engine's words, never a library's raw message.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from ..errors import (
    AnswerCutOffError,
    ConfigError,
    InvalidAnswerError,
    JudgeError,
    JudgeRequestError,
)
from ..formatting import first_line, refusal, refusals
from .bounds import AnswerBounds, bounds_of, max_tokens_for, unbounded
from .capabilities import capabilities, is_reasoning_family, refused_parameter, refuses_mode, split_thinking
from .config import NO_KEY, JudgeConfig, StructuredMode
from .cut_off import cut_off_message
from .sent import request_sent
from .probabilities import LOGPROB_PARAMETERS, from_logprobs, token_logprobs, weighs
from .protocol import FieldProbabilities, JudgeAnswer, JudgeRequest, TokenUsage
from .failures import cause_of, cut_text, error_message, error_param, judge_error, stopped_sending
from ..scrub import install_log_filter, remember_secret
from .streaming import StoppedSending, chat_completion, streamed, whole_chat_completion

if TYPE_CHECKING:
    import instructor

#: Told the status and headers of every HTTP response (rate-limit headers, 429s), including
#: the responses the SDK retries on its own.
ResponseObserver = Callable[[int, Mapping[str, str]], None]

def observing_http_client(sdk: Any, observer: ResponseObserver | None) -> Any:
    """An HTTP client for `sdk` (the `openai` or `anthropic` module) that counts every request
    it sends (sent.py: the one place a request that left is counted, answered or not) and
    tells `observer` about every response."""

    async def count(request: Any) -> None:
        request_sent()

    async def observe(response: Any) -> None:
        if observer is not None:
            observer(response.status_code, response.headers)

    return sdk.DefaultAsyncHttpxClient(event_hooks={"request": [count], "response": [observe]})


# Clients hold connection pools bound to the event loop that created them, so they are
# shared per loop (every sync `run()` call gets a fresh loop).
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], Any]] = weakref.WeakKeyDictionary()

# Answer models as Instructor wants them, built once per model (see `_prepared`).
_prepared_models: weakref.WeakKeyDictionary[type[BaseModel], type[BaseModel]] = weakref.WeakKeyDictionary()

#: The most refusals (a parameter, a mode) one call learns from before it gives up.
MAX_ADJUSTMENTS = 6


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
        for _ in range(MAX_ADJUSTMENTS):
            wanted = wanted_parameters(request, judge_thinks(request, where, model))
            # A tool call's arguments come without them; an answer with nothing to weigh (a list of
            # claims) would only make the server send, and the engine read, a figure per token.
            if request.response_model is not None and mode != "tools" and weighs(request.response_model):
                wanted.update(LOGPROB_PARAMETERS)
            parameters = capabilities.parameters(where, model, wanted)
            try:
                answer = await self._ask(self._client(mode, base_url, key), request, parameters, mode)
            except _ThinkingCutOff:
                capabilities.learn_thinking(where, model)  # its thinking needs the step's whole max_tokens
                continue
            except (ConfigError, JudgeError):
                raise
            except StoppedSending as stopped:
                raise stopped_sending(stopped, config, request) from None
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
            else:
                if answer.thinking:
                    capabilities.learn_thinking(where, model)
                return answer
        raise JudgeRequestError(f"the judge at {where} kept refusing the request after {MAX_ADJUSTMENTS} adjustments", request.step)

    async def _ask(self, client: instructor.AsyncInstructor, request: JudgeRequest, parameters: dict[str, Any], mode: StructuredMode) -> JudgeAnswer:
        sdk = client.client
        assert sdk is not None  # Instructor's client over an SDK client always holds it
        kwargs: dict[str, Any] = {"model": self.config.model_name, "messages": request.messages, **parameters}
        if request.response_model is None:
            completion = await self._complete(sdk, kwargs)
            choice = completion.choices[0]
            message = choice.message
            text, thinking = split_thinking(message.content or "")
            if choice.finish_reason == "length":
                _raise_cut_off(request, parameters, message.content, joined_text(_reasoning_field(message), thinking))
            return JudgeAnswer(value=text, usage=_usage(completion), thinking=joined_text(_reasoning_field(message), thinking))
        from instructor.v2.core.registry import mode_registry

        handlers = mode_registry.get_handlers(client.provider, _instructor_mode(mode))
        kwargs.update(_request_shape(request, handlers, (client.provider, mode)))
        response_model = request.response_model

        def read(completion: Any) -> tuple[str | None, TokenUsage | None]:
            return _strip_thinking(completion), _usage(completion)

        def check_finished(completion: Any, thinking: str | None) -> None:
            choice = completion.choices[0]
            if choice.finish_reason == "length":
                _raise_cut_off(request, parameters, cut_text(choice.message), thinking)

        def weighed(completion: Any) -> tuple[FieldProbabilities, ...] | None:
            choice = completion.choices[0]
            return from_logprobs(response_model, choice.message.content or "", token_logprobs(choice)) if mode != "tools" else None

        return await validated_answer(
            request, kwargs, lambda sent: self._complete(sdk, sent), read, check_finished,
            lambda completion: _validated(response_model, completion, mode, handlers), handlers.reask_handler, weighed,
        )

    async def _complete(self, sdk: Any, kwargs: dict[str, Any]) -> Any:
        """One answer, streamed when the request asks for it (see streaming.py)."""
        import httpx2
        import openai

        sent = sent_as_is(kwargs)
        return await streamed(
            lambda: sdk.chat.completions.with_streaming_response.create(**sent), chat_completion, whole_chat_completion,
            timeouts=(httpx2.TimeoutException, openai.APITimeoutError), silence=self.config.timeout, retries=self.config.http_retries, model=self.config.model,
        )


#: Request parameters handed to the SDK as the JSON they already are (its `extra_body`). The SDK
#: walks every parameter against its declared types to rename keys and encode files, and a
#: message against each type of its union of message types in turn: for these plain
#: messages and JSON schemas that changes nothing (the same body goes out), and a profile of
#: a zero-latency batch found it about a quarter of the CPU of every call, the HTTP
#: client's included.
SENT_AS_IS = ("messages", "response_format", "tools")


def sent_as_is(kwargs: dict[str, Any]) -> dict[str, Any]:
    """`kwargs` for the SDK's `create`, the parameters of SENT_AS_IS in its `extra_body`, which
    the SDK merges into the body over the (empty) messages it requires."""
    moved = {name: kwargs[name] for name in SENT_AS_IS if name in kwargs}
    if not moved:
        return kwargs
    kept = {name: value for name, value in kwargs.items() if name not in moved}
    return {**kept, "messages": [], "extra_body": {**(kwargs.get("extra_body") or {}), **moved}}


class _ThinkingCutOff(Exception):
    """An answer cut off at a max_tokens worked out from its schema, by a judge that thought
    first: asked again with the step's own max_tokens."""


def _raise_cut_off(request: JudgeRequest, parameters: dict[str, Any], text: str | None, thinking: str | None) -> None:
    limit = parameters.get("max_tokens", parameters.get("max_completion_tokens"))
    if thinking and limit is not None and limit != request.sampling.max_tokens:
        raise _ThinkingCutOff
    raise AnswerCutOffError(cut_off_message(request, text, limit), request.step)


def _validated(model: type[BaseModel], completion: Any, mode: StructuredMode, handlers: Any) -> Any:
    """The answer validated against `model` (its bounds and rules included): the JSON of
    the answer directly, else through Instructor's parser for the mode (code fences, JSON in
    the text of a tool-calling answer, ...)."""
    if mode in _DIRECT_MODES:
        try:
            return model.model_validate_json(_answer_text(completion.choices[0].message, mode))
        except (ValidationError, ValueError) as refused:
            first = refused
    else:
        first = None
    try:
        return handlers.response_parser(response=completion, response_model=_prepared(model), validation_context=None, strict=None, stream=False, is_async=True)
    except Exception:
        if first is not None:
            raise first from None
        raise


#: The structured modes whose first attempt is sent and validated without Instructor's loop.
_DIRECT_MODES: frozenset[StructuredMode] = frozenset({"json_schema", "tools"})

# What Instructor adds to a request for an answer model in a mode (a response format, or a
# tool and the choice of it), worked out once per model and mode.
_shapes: weakref.WeakKeyDictionary[type[BaseModel], dict[Any, dict[str, Any]]] = weakref.WeakKeyDictionary()


def _request_shape(request: JudgeRequest, handlers: Any, shape: tuple[Any, StructuredMode]) -> dict[str, Any]:
    """What Instructor adds to the request for its answer model in the mode of `shape`: a
    response format or a tool (json_schema, tools: worked out once per answer model, the
    request's bounds then written into the schema), or the schema in the messages (json,
    md_json)."""
    model = request.response_model
    assert model is not None
    if shape[1] not in _DIRECT_MODES:
        _, shaped = handlers.request_handler(_prepared(model), {"messages": list(request.messages)})
        return dict(shaped)
    shaped = _shaped(_prepared(unbounded(model)), handlers, shape)
    bounds = bounds_of(model)
    if bounds is None:
        return shaped
    per_shape = _shapes.get(model)  # a bounded model's own: its bounds written in once, not on every call
    if per_shape is None:
        per_shape = _shapes[model] = {}
    if shape not in per_shape:
        per_shape[shape] = _with_bounds(shaped, bounds)
    return per_shape[shape]


def _with_bounds(shaped: dict[str, Any], bounds: AnswerBounds) -> dict[str, Any]:
    """The response format or tool of `shaped` with `bounds` written into its schema."""
    if "response_format" in shaped:
        response_format = shaped["response_format"]
        schema = bounds.applied(response_format["json_schema"]["schema"])
        return {**shaped, "response_format": {**response_format, "json_schema": {**response_format["json_schema"], "schema": schema}}}
    tool = shaped["tools"][0]
    function = {**tool["function"], "parameters": bounds.applied(tool["function"]["parameters"])}
    return {**shaped, "tools": [{**tool, "function": function}, *shaped["tools"][1:]]}


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


def refusal_of(error: Exception) -> str:
    return refusal(error) if isinstance(error, ValidationError) else first_line(str(error))


def refusals_of(error: Exception) -> str:
    return refusals(error) if isinstance(error, ValidationError) else first_line(str(error))


async def validated_answer(
    request: JudgeRequest,
    kwargs: dict[str, Any],
    complete: Callable[[dict[str, Any]], Awaitable[Any]],
    read: Callable[[Any], tuple[str | None, TokenUsage | None]],
    check_finished: Callable[[Any, str | None], None],
    parse: Callable[[Any], Any],
    reask: Callable[..., dict[str, Any]],
    weigh: Callable[[Any], tuple[FieldProbabilities, ...] | None] | None = None,
) -> JudgeAnswer:
    """An answer that passes validation, for either adapter: each attempt `complete`d, `read`
    for its thinking and usage (summed over the attempts), refused when `check_finished` finds
    it cut off, and `parse`d; a refused one is asked again with Instructor's `reask` for the
    mode, up to the step's re-asks, the judge told every problem in the engine's words. The
    answer that passes is `weigh`ed for its values' probabilities (see probabilities.py)."""
    from instructor.core.exceptions import InstructorError

    attempts = 1 + request.sampling.reasks
    usage: TokenUsage | None = None
    thoughts: list[str | None] = []
    for attempt in range(attempts):
        response = await complete(kwargs)
        thinking, used = read(response)
        thoughts.append(thinking)
        usage = _added(usage, used)
        check_finished(response, thinking)
        try:
            value = parse(response)
        except (ValidationError, ValueError, InstructorError) as refused:
            if attempt + 1 == attempts:
                raise InvalidAnswerError(f"the judge's answer failed validation after {attempts} attempt(s): {refusal_of(refused)}", request.step) from None
            # Told to the judge as the engine words it, every problem on its own line.
            kwargs = reask(kwargs=kwargs, response=response, exception=ValueError(refusals_of(refused)))
            continue
        weighed = weigh(response) if weigh is not None else None
        return JudgeAnswer(value=value, usage=usage, thinking=joined_text(*thoughts), probabilities=weighed)
    raise AssertionError("unreachable")


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


def wanted_parameters(request: JudgeRequest, thinks: bool) -> dict[str, Any]:
    """The parameters a request would send, before any model refuses some: its sampling,
    `max_tokens` no more than its answer's schema allows (unless the judge thinks first), and
    a streamed answer with its usage."""
    wanted = {name: value for name, value in request.sampling.model_dump(exclude={"reasks"}).items() if value is not None}
    limit = max_tokens_for(request.sampling.max_tokens, request.response_model, thinks)
    if limit is not None:
        wanted["max_tokens"] = limit
    return {**wanted, "stream": True, "stream_options": {"include_usage": True}}


def judge_thinks(request: JudgeRequest, where: str, model: str) -> bool:
    """Whether the judge thinks before it answers, so its max_tokens must leave room for that."""
    return request.sampling.reasoning_effort is not None or is_reasoning_family(model) or capabilities.thinks(where, model)


def _reasoning_field(message: Any) -> str | None:
    """`reasoning_content` (vLLM, DeepSeek, llama.cpp) or `reasoning` (Ollama, OpenRouter)."""
    extra = getattr(message, "model_extra", None) or {}
    for name in ("reasoning_content", "reasoning"):
        value = extra.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def joined_text(*parts: str | None) -> str | None:
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
    return joined_text(*found)


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

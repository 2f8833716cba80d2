"""Where the judge is called: an Instructor client over the `openai` SDK, structured calls
with re-asks, token usage, and every failure turned into a typed, one-line `JudgeError`.

This is the only module that imports Instructor or openai, and it does so on the first call,
so that loading a catalog or starting the command line does not pay for them.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from ..errors import (
    AnswerCutOffError,
    InvalidAnswerError,
    JudgeAuthenticationError,
    JudgeError,
    JudgeRateLimitError,
    JudgeRequestError,
    JudgeServerError,
    JudgeTimeoutError,
    JudgeUnreachableError,
)
from ..formatting import first_line, refusal
from .config import JudgeConfig
from .protocol import JudgeAnswer, JudgeRequest, TokenUsage

if TYPE_CHECKING:
    import instructor

#: Told the status and headers of every HTTP response (rate-limit headers, 429s), including
#: the responses the SDK retries on its own.
ResponseObserver = Callable[[int, Mapping[str, str]], None]

# Clients hold connection pools bound to the event loop that created them, so they are
# shared per loop (every sync `run()` call gets a fresh loop).
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], instructor.AsyncInstructor]] = (
    weakref.WeakKeyDictionary()
)
# Answer models as Instructor wants them, built once per model (see `_prepared`).
_prepared_models: weakref.WeakKeyDictionary[type[BaseModel], type[BaseModel]] = weakref.WeakKeyDictionary()


class OpenAIJudge:
    """Asks one model behind an OpenAI-compatible endpoint for validated answers.
    `observe_responses` is told about every HTTP response (a rate limiter reads 429s and
    rate-limit headers there)."""

    def __init__(self, config: JudgeConfig, observe_responses: ResponseObserver | None = None) -> None:
        config.check()
        self.config = config
        self.observe_responses = observe_responses

    @property
    def model(self) -> str:
        return self.config.model

    @property
    def identity(self) -> dict[str, Any]:
        """What decides an answer besides the request: the model, where it is served, and how
        structured answers are asked for (never the key)."""
        base_url, _ = self.config.endpoint()
        return {"model": self.config.model, "endpoint": base_url or self.config.provider, "mode": self.config.mode}

    def _client(self) -> tuple[instructor.AsyncInstructor, str]:
        import instructor
        import openai

        base_url, key = self.config.endpoint()
        per_loop = _clients.setdefault(asyncio.get_running_loop(), {})
        observer = self.observe_responses
        cache_key = (base_url, key, self.config.timeout, self.config.http_retries, self.config.mode, observer)
        if cache_key not in per_loop:
            http_client = None
            if observer is not None:

                async def observe(response: Any) -> None:
                    observer(response.status_code, response.headers)

                http_client = openai.DefaultAsyncHttpxClient(event_hooks={"response": [observe]})
            sdk = openai.AsyncOpenAI(
                base_url=base_url, api_key=key, timeout=self.config.timeout, max_retries=self.config.http_retries, http_client=http_client
            )
            modes = {
                "json_schema": instructor.Mode.JSON_SCHEMA,
                "tools": instructor.Mode.TOOLS,
                "json": instructor.Mode.JSON,
                "md_json": instructor.Mode.MD_JSON,
            }
            per_loop[cache_key] = instructor.from_openai(sdk, mode=modes[self.config.mode])
        return per_loop[cache_key], key

    async def ask(self, request: JudgeRequest) -> JudgeAnswer:
        """The judge's answer: an instance of the request's response model, or text."""
        client, key = self._client()
        sampling = request.sampling
        parameters = {name: value for name, value in sampling.model_dump(exclude={"reasks"}).items() if value is not None}
        try:
            if request.response_model is None:
                completion = await client.chat.completions.create(
                    model=self.config.model_name, messages=request.messages, response_model=None, **parameters  # type: ignore[arg-type]
                )
                text = completion.choices[0].message.content or ""
                return JudgeAnswer(value=text, usage=_usage(completion))
            value, completion = await client.chat.completions.create_with_completion(
                model=self.config.model_name,
                messages=request.messages,  # type: ignore[arg-type]
                response_model=_prepared(request.response_model),
                max_retries=sampling.reasks,  # Instructor's count of re-asks after the first attempt
                **parameters,
            )
            return JudgeAnswer(value=value, usage=_usage(completion))
        except Exception as exc:  # every failure of the call becomes one typed JudgeError line
            raise _judge_error(exc, self.config, key, request) from exc


def _prepared(model: type[BaseModel]) -> type[BaseModel]:
    """`model` as Instructor would wrap it on every call (its `openai_schema`), with its JSON
    schema generated once: a profile showed Instructor re-creating the wrapper class and
    regenerating the schema for each request, the largest part of the engine's own time."""
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


def _usage(completion: Any) -> TokenUsage | None:
    """Token counts, with the cached-prompt and reasoning shares when the provider reports
    them (OpenAI: `prompt_tokens_details.cached_tokens`, `completion_tokens_details.reasoning_tokens`)."""
    usage = getattr(completion, "usage", None)
    if usage is None:
        return None
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    completion_details = getattr(usage, "completion_tokens_details", None)
    return TokenUsage(
        prompt_tokens=usage.prompt_tokens or 0,
        completion_tokens=usage.completion_tokens or 0,
        total_tokens=usage.total_tokens or 0,
        cached_prompt_tokens=getattr(prompt_details, "cached_tokens", None) or 0,
        reasoning_tokens=getattr(completion_details, "reasoning_tokens", None) or 0,
    )


def _judge_error(exc: BaseException, config: JudgeConfig, key: str, request: JudgeRequest) -> JudgeError:
    import openai
    from instructor.core.exceptions import (
        IncompleteOutputException,
        InstructorRetryException,
    )

    cause: BaseException = exc
    attempts = getattr(exc, "n_attempts", None)
    if isinstance(exc, InstructorRetryException) and exc.__cause__ is not None:
        cause = exc.__cause__
    where = config.base_url or os.environ.get("OPENAI_BASE_URL") or config.provider
    kind: type[JudgeError] = JudgeError
    if isinstance(cause, IncompleteOutputException):
        kind = AnswerCutOffError
        limit = f" of {request.sampling.max_tokens} tokens" if request.sampling.max_tokens else ""
        message = f"the judge's answer was cut off at its limit{limit}; raise max_tokens for this step"
    elif isinstance(cause, ValidationError):
        kind, message = InvalidAnswerError, f"the judge's answer failed validation after {attempts} attempt(s): {refusal(cause)}"
    elif isinstance(cause, (openai.AuthenticationError, openai.PermissionDeniedError)):
        kind = JudgeAuthenticationError
        message = f"the judge at {where} refused the API key (HTTP {cause.status_code}); check OPENAI_API_KEY or api_key"
    elif isinstance(cause, openai.RateLimitError):
        kind, message = JudgeRateLimitError, f"the judge at {where} kept answering HTTP 429 (rate limit): {first_line(_error_message(cause))}"
    elif isinstance(cause, openai.APIStatusError):
        kind = JudgeServerError if cause.status_code >= 500 else JudgeRequestError
        message = f"the judge at {where} answered HTTP {cause.status_code}: {first_line(_error_message(cause))}"
    elif isinstance(cause, openai.APITimeoutError):
        kind, message = JudgeTimeoutError, f"the judge at {where} did not answer within {config.timeout:g}s"
    elif isinstance(cause, openai.APIConnectionError):
        kind, message = JudgeUnreachableError, f"cannot reach the judge at {where}: {first_line(str(cause.__cause__ or cause))}"
    else:
        message = f"{type(cause).__name__}: {first_line(str(cause))}"
    return kind(_scrub(message, key), request.step)


def _error_message(error: Any) -> str:
    body = error.body
    if isinstance(body, dict):
        nested = body.get("error")
        message = nested.get("message") if isinstance(nested, dict) else body.get("message")
        if message:
            return str(message)
    return str(error.message)


def _scrub(text: str, key: str) -> str:
    return text.replace(key, "***") if key and len(key) > 3 else text

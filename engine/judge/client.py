"""Where the judge is called: an Instructor client over the `openai` SDK, structured calls
with re-asks, token usage, and every failure turned into a typed, one-line `JudgeError`.

This is the only module that imports Instructor or openai, and it does so on the first call,
so that loading a catalog or starting the command line does not pay for them.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

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
from .config import NO_KEY, JudgeConfig
from .protocol import JudgeAnswer, JudgeRequest, TokenUsage
from .secrets import install_log_filter, remember_secret, scrub

if TYPE_CHECKING:
    import instructor

# Clients hold connection pools bound to the event loop that created them, so they are
# shared per loop (every sync `run()` call gets a fresh loop).
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], instructor.AsyncInstructor]] = (
    weakref.WeakKeyDictionary()
)


class OpenAIJudge:
    """Asks one model behind an OpenAI-compatible endpoint for validated answers."""

    def __init__(self, config: JudgeConfig) -> None:
        config.check()
        self.config = config
        remember_secret(config.api_key.get_secret_value() if config.api_key else None)
        install_log_filter()

    @property
    def model(self) -> str:
        return self.config.model

    def _client(self) -> tuple[instructor.AsyncInstructor, str]:
        import instructor
        import openai

        base_url, key = self.config.endpoint()
        if key != NO_KEY:
            remember_secret(key)
        per_loop = _clients.setdefault(asyncio.get_running_loop(), {})
        cache_key = (base_url, key, self.config.timeout, self.config.http_retries, self.config.mode)
        if cache_key not in per_loop:
            sdk = openai.AsyncOpenAI(base_url=base_url, api_key=key, timeout=self.config.timeout, max_retries=self.config.http_retries)
            modes = {
                "json_schema": instructor.Mode.JSON_SCHEMA,
                "tools": instructor.Mode.TOOLS,
                "json": instructor.Mode.JSON,
                "md_json": instructor.Mode.MD_JSON,
            }
            per_loop[cache_key] = instructor.from_openai(sdk, mode=modes[self.config.mode])
            install_log_filter()  # the SDKs' loggers exist now that they are imported
        return per_loop[cache_key], key

    async def ask(self, request: JudgeRequest) -> JudgeAnswer:
        """The judge's answer: an instance of the request's response model, or text."""
        client, key = self._client()
        sampling = request.sampling
        parameters = {name: value for name, value in sampling.model_dump(exclude={"reasks"}).items() if value is not None}
        started = time.monotonic()
        try:
            if request.response_model is None:
                completion = await client.chat.completions.create(
                    model=self.config.model_name, messages=request.messages, response_model=None, **parameters  # type: ignore[arg-type]
                )
                choice = completion.choices[0]
                if choice.finish_reason == "length":
                    raise AnswerCutOffError(_cut_off_message(request), request.step)
                return JudgeAnswer(value=choice.message.content or "", usage=_usage(completion))
            value, completion = await client.chat.completions.create_with_completion(
                model=self.config.model_name,
                messages=request.messages,  # type: ignore[arg-type]
                response_model=request.response_model,
                max_retries=sampling.reasks,  # Instructor's count of re-asks after the first attempt
                **parameters,
            )
            return JudgeAnswer(value=value, usage=_usage(completion))
        except JudgeError:
            raise
        except Exception as exc:  # every failure of the call becomes one typed JudgeError line
            raise _judge_error(exc, self.config, key, request, time.monotonic() - started) from exc


def _usage(completion: Any) -> TokenUsage | None:
    usage = getattr(completion, "usage", None)
    if usage is None:
        return None
    return TokenUsage(
        prompt_tokens=usage.prompt_tokens or 0,
        completion_tokens=usage.completion_tokens or 0,
        total_tokens=usage.total_tokens or 0,
    )


def _cut_off_message(request: JudgeRequest) -> str:
    limit = f"at {request.sampling.max_tokens} tokens" if request.sampling.max_tokens else "at the model's token limit"
    return f"the judge's answer was cut off {limit}; raise max_tokens for this step (`judge: max_tokens:` of the scorer or of the step in the YAML)"


def _waited(config: JudgeConfig, elapsed: float) -> str:
    attempts = config.http_retries + 1
    tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
    return f"{tries}, {elapsed:.0f}s in all; --timeout and --retries (SCORERS_TIMEOUT, SCORERS_RETRIES) change this"


def _judge_error(exc: BaseException, config: JudgeConfig, key: str, request: JudgeRequest, elapsed: float) -> JudgeError:
    import openai
    from instructor.core.exceptions import (
        IncompleteOutputException,
        InstructorRetryException,
    )

    cause: BaseException = exc
    attempts = getattr(exc, "n_attempts", None)
    if isinstance(exc, InstructorRetryException) and exc.__cause__ is not None:
        cause = exc.__cause__
    where = config.address()
    kind: type[JudgeError] = JudgeError
    # Fatal: no other request can succeed either (a refused key, an unknown model, an
    # unsupported response format), so a batch run stops instead of failing every item.
    fatal = False
    if isinstance(cause, IncompleteOutputException):
        kind, message = AnswerCutOffError, _cut_off_message(request)
    elif isinstance(cause, ValidationError):
        kind, message = InvalidAnswerError, f"the judge's answer failed validation after {attempts} attempt(s): {refusal(cause)}"
    elif isinstance(cause, (openai.AuthenticationError, openai.PermissionDeniedError)):
        kind, fatal = JudgeAuthenticationError, True
        message = f"the judge at {where} refused the API key (HTTP {cause.status_code}); check OPENAI_API_KEY or api_key"
    elif isinstance(cause, openai.RateLimitError):
        kind, message = JudgeRateLimitError, f"the judge at {where} kept answering HTTP 429 (rate limit): {first_line(_error_message(cause))}"
    elif isinstance(cause, openai.APIStatusError):
        kind = JudgeServerError if cause.status_code >= 500 else JudgeRequestError
        detail = first_line(_error_message(cause))
        message = f"the judge at {where} answered HTTP {cause.status_code}: {detail}"
        if cause.status_code == 404 or (kind is JudgeRequestError and _about_the_model(detail)):
            message += f" (is {config.model_name!r} a model this server serves?)"
            fatal = True
        elif kind is JudgeRequestError and _about_response_format(detail):
            alternatives = " or ".join(f"--mode {mode}" for mode in ("tools", "json") if mode != config.mode)
            message += f" (this server may not support --mode {config.mode}: try {alternatives})"
            fatal = True
    elif isinstance(cause, openai.APITimeoutError):
        message = f"the judge at {where} did not answer within {config.timeout:g}s per attempt ({_waited(config, elapsed)})"
        kind = JudgeTimeoutError
    elif isinstance(cause, openai.APIConnectionError):
        kind = JudgeUnreachableError
        message = (
            f"cannot reach the judge at {where}: {first_line(str(cause.__cause__ or cause))} ({_waited(config, elapsed)}); "
            "is the server running at that address (--base-url, OPENAI_BASE_URL)?"
        )
    else:
        message = f"{type(cause).__name__}: {first_line(str(cause))}"
    return kind(_scrub(message, key), request.step, fatal=fatal)


def _about_the_model(detail: str) -> bool:
    lowered = detail.lower()
    return "model" in lowered and any(words in lowered for words in ("not found", "does not exist", "unknown", "not exist", "no such"))


def _about_response_format(detail: str) -> bool:
    lowered = detail.lower()
    return any(word in lowered for word in ("response_format", "json_schema", "response format", "structured output", "grammar"))


def _error_message(error: Any) -> str:
    body = error.body
    if isinstance(body, dict):
        nested = body.get("error")
        message = nested.get("message") if isinstance(nested, dict) else body.get("message")
        if message:
            return str(message)
    return str(error.message)


def _scrub(text: str, key: str) -> str:
    text = scrub(text)
    return text.replace(key, "***") if key and len(key) > 3 else text

"""How a failed judge call is told: an SDK's exception (openai's or anthropic's, whose classes
have the same names, or Instructor's around them) as one typed, one-line `JudgeError` that
names the endpoint and what to change, with the key masked."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from pydantic import ValidationError

from ..errors import (
    AnswerCutOffError,
    InvalidAnswerError,
    JudgeAuthenticationError,
    JudgeError,
    JudgeModelNotFoundError,
    JudgeModeUnsupportedError,
    JudgeRateLimitError,
    JudgeRequestError,
    JudgeServerError,
    JudgeTimeoutError,
    JudgeUnreachableError,
)
from ..formatting import first_line, refusal
from ..scrub import scrub
from .config import JudgeConfig, StructuredMode
from .cut_off import cut_off_message
from .protocol import JudgeRequest
from .streaming import StoppedSending, StreamError


def cause_of(exc: BaseException) -> BaseException:
    from instructor.core.exceptions import InstructorRetryException

    if isinstance(exc, InstructorRetryException) and exc.__cause__ is not None:
        return exc.__cause__
    return exc


def _incomplete_text(exc: BaseException) -> str | None:
    """The text of an answer Instructor found cut off."""
    completion = getattr(exc, "last_completion", None)
    try:
        return cut_text(completion.choices[0].message)  # type: ignore[union-attr]
    except (AttributeError, IndexError, TypeError):
        return None


def cut_text(message: Any) -> str | None:
    """What a cut-off answer got to: its text, or its tool call's arguments."""
    if message.content:
        return str(message.content)
    calls = getattr(message, "tool_calls", None) or []
    return str(calls[0].function.arguments) if calls else None


def _waited(config: JudgeConfig, elapsed: float) -> str:
    attempts = config.http_retries + 1
    tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
    return f"{tries}, {elapsed:.0f}s in all; --timeout and --retries (SCORERS_TIMEOUT, SCORERS_RETRIES) change this"


def judge_error(
    exc: BaseException,
    config: JudgeConfig,
    key: str,
    request: JudgeRequest,
    sdk: ModuleType,
    elapsed: float | None = None,
    mode: StructuredMode | None = None,
) -> JudgeError:
    """One typed, one-line error for a failed call through `sdk` (openai or anthropic: their
    exception classes have the same names). `elapsed` is how long the call took in all, with
    its retries; `mode` the structured mode last tried. Failures no other request can mend (a
    refused key, an unknown model, an unsupported response format) are of kinds that stop a
    batch run."""
    from instructor.core.exceptions import IncompleteOutputException

    cause = cause_of(exc)
    attempts = getattr(exc, "n_attempts", None)
    where = config.where()
    waited = f" ({_waited(config, elapsed)})" if elapsed is not None else ""
    kind: type[JudgeError] = JudgeError
    parameter: str | None = None
    if isinstance(cause, IncompleteOutputException):
        kind, message = AnswerCutOffError, cut_off_message(request, _incomplete_text(cause))
    elif isinstance(cause, ValidationError):
        kind, message = InvalidAnswerError, f"the judge's answer failed validation after {attempts} attempt(s): {refusal(cause)}"
    elif isinstance(cause, (sdk.AuthenticationError, sdk.PermissionDeniedError)):
        kind = JudgeAuthenticationError
        variable = config.provider_preset().api_key_env or "the API key"
        message, parameter = f"the judge at {where} refused the API key (HTTP {cause.status_code}); check {variable}", "api_key"
    elif isinstance(cause, sdk.RateLimitError):
        kind, message = JudgeRateLimitError, f"the judge at {where} kept answering HTTP 429 (rate limit): {first_line(error_message(cause))}"
    elif isinstance(cause, sdk.APIStatusError):
        kind = JudgeServerError if cause.status_code >= 500 else JudgeRequestError
        detail = first_line(error_message(cause))
        message = f"the judge at {where} answered HTTP {cause.status_code}: {detail}"
        if cause.status_code == 404 or (kind is JudgeRequestError and _about_the_model(detail)):
            message += f" (is {config.model_name!r} a model this server serves?)"
            kind = JudgeModelNotFoundError
        elif kind is JudgeRequestError and _about_response_format(detail):
            used = mode or config.structured_mode
            alternatives = " or ".join(f"--mode {other}" for other in ("tools", "json", "md_json") if other != used)
            message += f" (this server may not support --mode {used}: try {alternatives})"
            kind = JudgeModeUnsupportedError
    elif isinstance(cause, StreamError):
        kind, message = JudgeServerError, f"the judge at {where} stopped its answer with an error: {first_line(str(cause))}"
    elif isinstance(cause, sdk.APITimeoutError):
        kind, message = JudgeTimeoutError, f"the judge at {where} did not answer within {config.timeout:g}s per attempt{waited}; nothing of an answer came"
    elif isinstance(cause, sdk.APIConnectionError):
        kind = JudgeUnreachableError
        variables = ", ".join(config.provider_preset().base_url_env) or "its base URL"
        message = f"cannot reach the judge at {where}: {first_line(str(cause.__cause__ or cause))}{waited}; is the server running at that address (set by {variables})?"
        parameter = "base_url"
    else:
        message = f"{type(cause).__name__}: {first_line(str(cause))}"
    return kind(_scrub(message, key), request.step, parameter=parameter)


def stopped_sending(stopped: StoppedSending, config: JudgeConfig, request: JudgeRequest) -> JudgeTimeoutError:
    """A judge that fell silent midway through its answer, every time it was asked."""
    tries = "once" if stopped.attempts == 1 else f"each of {stopped.attempts} times"
    return JudgeTimeoutError(
        f"the judge at {config.where()} stopped sending its answer for {stopped.silence:g}s, {tries} it was asked "
        f"(the last time after {stopped.pieces} pieces of it): it is stuck, not slow (a judge still writing is waited for); "
        "--timeout and --retries (SCORERS_TIMEOUT, SCORERS_RETRIES) change this",
        request.step,
    )


def _about_the_model(detail: str) -> bool:
    lowered = detail.lower()
    return "model" in lowered and any(words in lowered for words in ("not found", "does not exist", "unknown", "not exist", "no such"))


def _about_response_format(detail: str) -> bool:
    lowered = detail.lower()
    return any(word in lowered for word in ("response_format", "json_schema", "response format", "structured output", "grammar"))


def _error_body(error: Any) -> dict[str, Any]:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        nested = body.get("error")
        return nested if isinstance(nested, dict) else body
    return {}


def error_message(error: Any) -> str:
    message = _error_body(error).get("message")
    return str(message) if message else str(getattr(error, "message", error))


def error_param(error: Any) -> Any:
    return _error_body(error).get("param")


def _scrub(text: str, key: str) -> str:
    text = scrub(text)
    return text.replace(key, "***") if key and len(key) > 3 else text

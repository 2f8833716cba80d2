"""Where the judge is called: `"provider/model"` → an Instructor client over the `openai`
SDK, structured calls with re-asks, token usage, and errors turned into one line.

This is the only module that talks to Instructor or openai.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from typing import Any, Literal, Protocol

import instructor
import openai
from instructor.core.exceptions import InstructorRetryException
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from .errors import ConfigError, JudgeError
from .schemas import refusal

StructuredMode = Literal["json_schema", "tools", "json", "md_json"]

_INSTRUCTOR_MODES: dict[str, instructor.Mode] = {
    "json_schema": instructor.Mode.JSON_SCHEMA,
    "tools": instructor.Mode.TOOLS,
    "json": instructor.Mode.JSON,
    "md_json": instructor.Mode.MD_JSON,
}

_OPENAI_HOST = "api.openai.com"


class Provider(BaseModel):
    """How a provider prefix of a model string reaches an OpenAI-compatible endpoint."""

    model_config = ConfigDict(frozen=True)

    base_url_env: tuple[str, ...]
    default_base_url: str | None
    api_key_env: str | None
    key_needed: bool


PROVIDERS: dict[str, Provider] = {
    # OpenAI itself, or any OpenAI-compatible server (vLLM, llama.cpp's server, LM Studio,
    # a gateway) through OPENAI_BASE_URL or an explicit base_url.
    "openai": Provider(base_url_env=("OPENAI_BASE_URL",), default_base_url=None, api_key_env="OPENAI_API_KEY", key_needed=True),
    # Ollama serves the OpenAI API under /v1 and ignores the key.
    "ollama": Provider(base_url_env=("OLLAMA_BASE_URL",), default_base_url="http://localhost:11434/v1", api_key_env=None, key_needed=False),
}


class Sampling(BaseModel):
    """Sampling settings of a judge call; a scorer sets them, a step may override some."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = Field(default=0.0, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)
    top_p: float | None = Field(default=None, gt=0, le=1)
    seed: int | None = None
    reasks: int = Field(default=2, ge=0, le=10, description="Re-asks after an answer fails validation")

    def merged(self, override: Sampling | None) -> Sampling:
        if override is None:
            return self
        return self.model_copy(update=override.model_dump(exclude_unset=True))


class JudgeConfig(BaseModel):
    """Which model judges and how to reach it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(description="'provider/model', e.g. 'openai/gpt-4o-mini' or 'ollama/llama3.1'")
    base_url: str | None = Field(default=None, description="Overrides the provider's endpoint")
    api_key: SecretStr | None = None
    mode: StructuredMode = Field(
        default="json_schema",
        description="How structured answers are requested: json_schema (OpenAI, vLLM, llama.cpp, Ollama), "
        "tools (function calling), json (JSON mode + schema in the prompt), md_json (plain text)",
    )
    timeout: float = Field(default=120.0, gt=0, description="Seconds per HTTP request")
    http_retries: int = Field(default=3, ge=0, description="Retries of 429/5xx/connection errors, with backoff")

    @property
    def provider(self) -> str:
        return self.model.split("/", 1)[0]

    @property
    def model_name(self) -> str:
        return self.model.split("/", 1)[1]

    def check(self) -> None:
        if "/" not in self.model or not self.model_name:
            raise ConfigError(f"judge model {self.model!r} must be 'provider/model', e.g. 'openai/gpt-4o-mini'")
        if self.provider not in PROVIDERS:
            raise ConfigError(
                f"unknown judge provider {self.provider!r} in {self.model!r}; known: {', '.join(PROVIDERS)} "
                "(any OpenAI-compatible server works as 'openai/<model>' with a base_url)"
            )

    def endpoint(self) -> tuple[str | None, str]:
        """(base_url, api_key) after applying environment variables and provider defaults."""
        self.check()
        provider = PROVIDERS[self.provider]
        base_url = self.base_url or next((os.environ[name] for name in provider.base_url_env if os.environ.get(name)), None)
        base_url = base_url or provider.default_base_url
        key = self.api_key.get_secret_value() if self.api_key else None
        if key is None and provider.api_key_env:
            key = os.environ.get(provider.api_key_env) or None
        if key is None:
            talks_to_openai = base_url is None or _OPENAI_HOST in base_url
            if provider.key_needed and talks_to_openai:
                raise ConfigError(
                    f"no judge configured for {self.model!r}: set {provider.api_key_env} (or pass api_key=), or set "
                    "OPENAI_BASE_URL (or base_url=) to a local OpenAI-compatible server such as "
                    "http://localhost:8000/v1 and name its model as 'openai/<model>'"
                )
            key = "not-needed"  # local servers ignore it, but the SDK insists on one
        return base_url, key


class TokenUsage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
        )


class JudgeAnswer(BaseModel):
    value: Any
    usage: TokenUsage | None


# Clients hold connection pools bound to the event loop that created them, so they are
# shared per loop (every sync `run()` call gets a fresh loop).
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], instructor.AsyncInstructor]] = (
    weakref.WeakKeyDictionary()
)


class AsksJudge(Protocol):
    """What a scorer needs from a judge; `Judge` asks a model, a preview replays given answers."""

    @property
    def model(self) -> str: ...

    async def ask(
        self, messages: list[dict[str, str]], sampling: Sampling, step: str, response_model: type[BaseModel] | None = None
    ) -> JudgeAnswer: ...


class Judge:
    """Asks one configured model for validated answers."""

    def __init__(self, config: JudgeConfig) -> None:
        config.check()
        self.config = config

    @property
    def model(self) -> str:
        return self.config.model

    def _client(self) -> tuple[instructor.AsyncInstructor, str]:
        base_url, key = self.config.endpoint()
        per_loop = _clients.setdefault(asyncio.get_running_loop(), {})
        cache_key = (base_url, key, self.config.timeout, self.config.http_retries, self.config.mode)
        if cache_key not in per_loop:
            sdk = openai.AsyncOpenAI(
                base_url=base_url, api_key=key, timeout=self.config.timeout, max_retries=self.config.http_retries
            )
            per_loop[cache_key] = instructor.from_openai(sdk, mode=_INSTRUCTOR_MODES[self.config.mode])
        return per_loop[cache_key], key

    async def ask(
        self,
        messages: list[dict[str, str]],
        sampling: Sampling,
        step: str,
        response_model: type[BaseModel] | None = None,
    ) -> JudgeAnswer:
        """The judge's answer: an instance of `response_model`, or text when it is None."""
        client, key = self._client()
        parameters = {
            name: value
            for name, value in sampling.model_dump(exclude={"reasks"}).items()
            if value is not None
        }
        try:
            if response_model is None:
                completion = await client.chat.completions.create(
                    model=self.config.model_name, messages=messages, response_model=None, **parameters
                )
                text = completion.choices[0].message.content or ""
                return JudgeAnswer(value=text, usage=_usage(completion))
            value, completion = await client.chat.completions.create_with_completion(
                model=self.config.model_name,
                messages=messages,
                response_model=response_model,
                max_retries=sampling.reasks,  # Instructor's count of re-asks after the first attempt
                **parameters,
            )
            return JudgeAnswer(value=value, usage=_usage(completion))
        except Exception as exc:  # every failure of the call becomes one JudgeError line
            raise JudgeError(_scrub(_describe(exc, self.config), key), step) from exc


def _usage(completion: Any) -> TokenUsage | None:
    usage = getattr(completion, "usage", None)
    if usage is None:
        return None
    return TokenUsage(
        prompt_tokens=usage.prompt_tokens or 0,
        completion_tokens=usage.completion_tokens or 0,
        total_tokens=usage.total_tokens or 0,
    )


def _describe(exc: BaseException, config: JudgeConfig) -> str:
    cause: BaseException = exc
    attempts = getattr(exc, "n_attempts", None)
    if isinstance(exc, InstructorRetryException) and exc.__cause__ is not None:
        cause = exc.__cause__
    where = config.base_url or os.environ.get("OPENAI_BASE_URL") or config.provider
    if isinstance(cause, ValidationError):
        return f"the judge's answer failed validation after {attempts} attempt(s): {refusal(cause)}"
    if isinstance(cause, openai.AuthenticationError):
        return f"the judge at {where} refused the API key (HTTP 401); check OPENAI_API_KEY or api_key"
    if isinstance(cause, openai.APIStatusError):
        return f"the judge at {where} answered HTTP {cause.status_code}: {_first_line(_error_message(cause))}"
    if isinstance(cause, openai.APITimeoutError):
        return f"the judge at {where} did not answer within {config.timeout:g}s"
    if isinstance(cause, openai.APIConnectionError):
        return f"cannot reach the judge at {where}: {_first_line(str(cause.__cause__ or cause))}"
    return f"{type(cause).__name__}: {_first_line(str(cause))}"


def _error_message(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        nested = body.get("error")
        message = nested.get("message") if isinstance(nested, dict) else body.get("message")
        if message:
            return str(message)
    return error.message


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:300]


def _scrub(text: str, key: str) -> str:
    return text.replace(key, "***") if key and len(key) > 3 else text

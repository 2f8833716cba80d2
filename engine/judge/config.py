"""Which model judges and how it is reached: `"provider/model"` strings, the provider
presets, the environment variables they read, and the sampling settings of a call.

Nothing here imports a provider SDK: a catalog can be loaded, checked and previewed, and the
command line can start, without them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from ..errors import ConfigError

StructuredMode = Literal["json_schema", "tools", "json", "md_json"]

_OPENAI_HOST = "api.openai.com"
#: What is sent as the key to servers that need none (not a secret).
NO_KEY = "not-needed"


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
    timeout: float = Field(default=60.0, gt=0, description="Seconds one judge call may take (per attempt)")
    http_retries: int = Field(default=2, ge=0, le=10, description="Retries of 429/5xx/timeouts/connection errors, with backoff")

    @field_validator("timeout")
    @classmethod
    def _finite_timeout(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("must be a finite number of seconds")
        return value

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

    def _base_url(self) -> str | None:
        provider = PROVIDERS[self.provider]
        base_url = self.base_url or next((os.environ[name] for name in provider.base_url_env if os.environ.get(name)), None)
        return base_url or provider.default_base_url

    def address(self) -> str:
        """Where the judge is reached, for messages (no key involved)."""
        self.check()
        return self._base_url() or self.provider

    def endpoint(self) -> tuple[str | None, str]:
        """(base_url, api_key) after applying environment variables and provider defaults."""
        self.check()
        provider = PROVIDERS[self.provider]
        base_url = self._base_url()
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
            key = NO_KEY  # local servers ignore it, but the SDK insists on one
        return base_url, key


def resolve_judge(
    model: str | JudgeConfig | None,
    default_model: str | None,
    *,
    owner: str,
    base_url: str | None = None,
    api_key: str | None = None,
    mode: StructuredMode | None = None,
    timeout: float | None = None,
    retries: int | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> JudgeConfig:
    """The judge of a scorer: `model` (a 'provider/model' or a full config), else
    SCORERS_MODEL, else the scorer's own default; base URL, key, mode, timeout and retries
    given here win over the environment (SCORERS_MODE, SCORERS_TIMEOUT, SCORERS_RETRIES),
    which wins over `defaults` (the scorer's `judge:` block), then the config's own.
    `owner` names the scorer in errors."""
    if isinstance(model, JudgeConfig):
        base = model
    else:
        chosen = model or os.environ.get("SCORERS_MODEL") or default_model
        if not chosen:
            raise ConfigError(f"{owner}: no judge model; pass model='provider/model' or set SCORERS_MODEL")
        base = JudgeConfig(model=chosen)
    values: dict[str, Any] = dict(base)
    if not isinstance(model, JudgeConfig):
        values.update({name: value for name, value in (defaults or {}).items() if value is not None})
    environment = {"mode": "SCORERS_MODE", "timeout": "SCORERS_TIMEOUT", "http_retries": "SCORERS_RETRIES"}
    values.update({name: os.environ[variable] for name, variable in environment.items() if os.environ.get(variable)})
    given = {"base_url": base_url, "api_key": api_key, "mode": mode, "timeout": timeout, "http_retries": retries}
    values.update({name: value for name, value in given.items() if value is not None and value != ""})
    try:
        return JudgeConfig.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = {"http_retries": "retries"}.get(str(first["loc"][0]), ".".join(map(str, first["loc"])))
        where = {"timeout": " (--timeout, SCORERS_TIMEOUT)", "retries": " (--retries, SCORERS_RETRIES)", "mode": " (--mode, SCORERS_MODE)"}
        raise ConfigError(f"judge {field}{where.get(field, '')}: {first['msg']} (got {first.get('input')!r})") from None

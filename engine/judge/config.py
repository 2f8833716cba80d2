"""Which model judges and how it is reached: `"provider/model"` strings, the provider
presets, the environment variables they read, and the sampling settings of a call.

Nothing here imports a provider SDK: a catalog can be loaded, checked and previewed, and the
command line can start, without them.
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from ..errors import ConfigError

StructuredMode = Literal["json_schema", "tools", "json", "md_json"]

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
    rpm: float | None = Field(default=None, gt=0, description="Requests per minute to this model, for the whole process (None: unlimited)")
    tpm: float | None = Field(default=None, gt=0, description="Tokens per minute to this model, for the whole process (None: unlimited)")

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


def resolve_judge(
    model: str | JudgeConfig | None,
    default_model: str | None,
    *,
    owner: str,
    base_url: str | None = None,
    api_key: str | None = None,
    mode: StructuredMode | None = None,
    rpm: float | None = None,
    tpm: float | None = None,
) -> JudgeConfig:
    """The judge of a scorer: `model` (a 'provider/model' or a full config), else
    SCORERS_MODEL, else the scorer's own default; base URL, key and mode given here (or
    SCORERS_MODE) win over the config's; so do the rate limits `rpm` and `tpm`. `owner` names the
    scorer in errors."""
    if isinstance(model, JudgeConfig):
        base = model
    else:
        chosen = model or os.environ.get("SCORERS_MODEL") or default_model
        if not chosen:
            raise ConfigError(f"{owner}: no judge model; pass model='provider/model' or set SCORERS_MODEL")
        base = JudgeConfig(model=chosen)
    updates = {"base_url": base_url, "api_key": api_key, "mode": mode or os.environ.get("SCORERS_MODE"), "rpm": rpm, "tpm": tpm}
    try:
        return JudgeConfig.model_validate({**dict(base), **{name: value for name, value in updates.items() if value}})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(f"judge {'.'.join(map(str, first['loc']))}: {first['msg']}") from None

"""Which model judges and how it is reached: `"provider/model"` strings, the provider
presets, the environment variables they read, and the sampling settings of a call.

Nothing here imports a provider SDK: a catalog can be loaded, checked and previewed, and the
command line can start, without them.
"""

from __future__ import annotations

import math
import os
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
)

from ..errors import ConfigError

StructuredMode = Literal["json_schema", "tools", "json", "md_json"]
Adapter = Literal["openai", "azure", "anthropic"]
ReasoningEffort = Literal["minimal", "low", "medium", "high"]

_OPENAI_HOST = "api.openai.com"
#: What is sent as the key to servers that need none (not a secret).
NO_KEY = "not-needed"


class Provider(BaseModel):
    """How the provider prefix of a model string is reached: which adapter speaks to it,
    its default endpoint, and the environment variables it reads. A preset is data; adding
    one (in a catalog's `providers:` block, or `JudgeConfig(preset=...)`) needs no code."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    adapter: Adapter = Field(default="openai", description="openai (any OpenAI-compatible server), azure or anthropic")
    base_url: str | None = Field(default=None, description="The default endpoint")
    base_url_env: tuple[str, ...] = Field(default=(), description="Variables that override the endpoint, first set wins")
    api_key_env: str | None = Field(default=None, description="The variable holding the API key")
    key_needed: bool = Field(default=True, description="False for local servers that ignore the key")
    mode: StructuredMode | None = Field(default=None, description="Structured-output mode this service is known to need")
    extra_env: tuple[str, ...] = Field(default=(), description="Further variables the adapter reads (shown by `scorers judges`)")
    about: str = ""

    def variables(self) -> tuple[str, ...]:
        return (*self.base_url_env, *((self.api_key_env,) if self.api_key_env else ()), *self.extra_env)


def _hosted(base_url: str, key_env: str, about: str, **more: object) -> Provider:
    return Provider.model_validate({"base_url": base_url, "api_key_env": key_env, "about": about, **more})


def _local(base_url: str, base_url_env: str, about: str) -> Provider:
    return Provider(base_url=base_url, base_url_env=(base_url_env,), key_needed=False, about=about)


PROVIDERS: dict[str, Provider] = {
    # OpenAI itself, or any OpenAI-compatible server (vLLM, llama.cpp's server, LM Studio,
    # a gateway) through OPENAI_BASE_URL or an explicit base_url.
    "openai": Provider(base_url_env=("OPENAI_BASE_URL",), api_key_env="OPENAI_API_KEY", about="OpenAI, or any OpenAI-compatible server via OPENAI_BASE_URL"),
    "anthropic": Provider(
        adapter="anthropic", base_url_env=("ANTHROPIC_BASE_URL",), api_key_env="ANTHROPIC_API_KEY", mode="tools",
        about='Claude through the anthropic SDK (pip install "llm-scorers[anthropic]")',
    ),
    "azure": Provider(
        adapter="azure", base_url_env=("AZURE_OPENAI_ENDPOINT",), api_key_env="AZURE_OPENAI_API_KEY", extra_env=("OPENAI_API_VERSION",),
        about="Azure OpenAI: azure/<deployment>",
    ),
    "gemini": _hosted("https://generativelanguage.googleapis.com/v1beta/openai/", "GEMINI_API_KEY", "Google Gemini, OpenAI-compatible endpoint"),
    "openrouter": _hosted("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", "OpenRouter: openrouter/<vendor>/<model>"),
    "groq": _hosted("https://api.groq.com/openai/v1", "GROQ_API_KEY", "Groq"),
    "together": _hosted("https://api.together.xyz/v1", "TOGETHER_API_KEY", "Together AI"),
    "deepseek": _hosted("https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", "DeepSeek (JSON mode; no JSON-schema response format)", mode="json"),
    "mistral": _hosted("https://api.mistral.ai/v1", "MISTRAL_API_KEY", "Mistral AI"),
    "fireworks": _hosted("https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY", "Fireworks AI"),
    # Local servers ignore the key; each has its usual port and a variable to move it.
    "ollama": _local("http://localhost:11434/v1", "OLLAMA_BASE_URL", "Ollama (ollama serve)"),
    "vllm": Provider(
        base_url="http://localhost:8000/v1", base_url_env=("VLLM_BASE_URL",), api_key_env="VLLM_API_KEY", key_needed=False,
        about="vLLM (vllm serve MODEL)",
    ),
    "lmstudio": _local("http://localhost:1234/v1", "LMSTUDIO_BASE_URL", "LM Studio's local server"),
    "llamacpp": _local("http://localhost:8080/v1", "LLAMACPP_BASE_URL", "llama.cpp's llama-server"),
}


class Sampling(BaseModel):
    """Sampling settings of a judge call; a scorer sets them, a step may override some."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = Field(default=0.0, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)
    top_p: float | None = Field(default=None, gt=0, le=1)
    seed: int | None = None
    reasks: int = Field(default=2, ge=0, le=10, description="Re-asks after an answer fails validation")
    reasoning_effort: ReasoningEffort | None = Field(default=None, description="How hard a reasoning model thinks (sent only when set)")

    def merged(self, override: Sampling | None) -> Sampling:
        if override is None:
            return self
        return self.model_copy(update=override.model_dump(exclude_unset=True))


class JudgeConfig(BaseModel):
    """Which model judges and how to reach it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(description="'provider/model', e.g. 'openai/gpt-4o-mini', 'anthropic/claude-sonnet-4-5' or 'ollama/llama3.1'")
    base_url: str | None = Field(default=None, description="Overrides the provider's endpoint")
    api_key: SecretStr | None = None
    mode: StructuredMode | None = Field(
        default=None,
        description="How structured answers are requested: json_schema (OpenAI, vLLM, llama.cpp, Ollama), "
        "tools (function calling), json (JSON mode + schema in the prompt), md_json (plain text); "
        "default: the provider's known mode, else json_schema",
    )
    timeout: float = Field(default=60.0, gt=0, description="Seconds the judge may send nothing (before its answer starts, or midway through a streamed one) before the attempt is given up")
    http_retries: int = Field(default=2, ge=0, le=10, description="Retries of 429/5xx/timeouts/connection errors, with backoff")
    rpm: float | None = Field(default=None, gt=0, description="Requests per minute to this model, for the whole process (None: unlimited)")
    tpm: float | None = Field(default=None, gt=0, description="Tokens per minute to this model, for the whole process (None: unlimited)")
    preset: Provider | None = Field(default=None, description="How to reach the provider, when it is not a built-in preset")
    api_version: str | None = Field(default=None, description="Azure OpenAI API version (else OPENAI_API_VERSION)")

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

    @property
    def structured_mode(self) -> StructuredMode:
        """The mode asked for first: the configured one, else the provider's, else json_schema."""
        return self.mode or self.provider_preset().mode or "json_schema"

    def provider_preset(self) -> Provider:
        self.check()
        return self.preset or PROVIDERS[self.provider]

    def check(self) -> None:
        if "/" not in self.model or not self.model_name:
            raise ConfigError(f"judge model {self.model!r} must be 'provider/model', e.g. 'openai/gpt-4o-mini'")
        if self.preset is None and self.provider not in PROVIDERS:
            raise ConfigError(
                f"unknown judge provider {self.provider!r} in {self.model!r}; known: {', '.join(PROVIDERS)} "
                "(any OpenAI-compatible server works as 'openai/<model>' with a base_url, or add a preset under "
                "`providers:` in your catalog; `scorers judges` lists them)"
            )

    def identity(self) -> dict[str, Any]:
        """What decides a judge's answer besides the request, what a response cache keys on:
        the model, where it is served, and how structured answers are asked for (never the key)."""
        return {"model": self.model, "endpoint": self._base_url()[0] or self.provider, "mode": self.mode}

    def where(self) -> str:
        """The endpoint, for messages (never the key)."""
        return self._base_url()[0] or self.provider

    def _base_url(self) -> tuple[str | None, bool]:
        """The base URL after environment variables and the provider's default, and whether
        it was moved from that default; no key is looked at."""
        provider = self.provider_preset()
        base_url = self.base_url or next((os.environ[name] for name in provider.base_url_env if os.environ.get(name)), None)
        return base_url or provider.base_url, base_url is not None and base_url != provider.base_url

    def endpoint(self) -> tuple[str | None, str]:
        """(base_url, api_key) after applying environment variables and provider defaults."""
        provider = self.provider_preset()
        base_url, overridden = self._base_url()
        key = self.api_key.get_secret_value() if self.api_key else None
        if key is None and provider.api_key_env:
            key = os.environ.get(provider.api_key_env) or None
        if provider.adapter == "azure" and base_url is None:
            raise ConfigError(f"no Azure endpoint for {self.model!r}: set AZURE_OPENAI_ENDPOINT", parameter="base_url")
        if key is None:
            # A key is needed by the hosted service itself; a server given in its place
            # (a local one, a gateway) decides for itself, so none is demanded.
            if provider.adapter == "openai" and provider.base_url is None:
                hosted = base_url is None or _OPENAI_HOST in base_url
            else:
                hosted = provider.adapter == "azure" or not overridden
            if provider.key_needed and hosted:
                raise self._missing_key(provider)
            key = NO_KEY  # local servers ignore it, but the SDK insists on one
        return base_url, key

    def _missing_key(self, provider: Provider) -> ConfigError:
        if provider.adapter == "openai" and provider.base_url is None:
            return ConfigError(
                f"no judge configured for {self.model!r}: set {provider.api_key_env}, or point OPENAI_BASE_URL at a local "
                "OpenAI-compatible server such as http://localhost:8000/v1 and name the model openai/<model>",
                parameter="base_url",
            )
        return ConfigError(f"no API key for {self.model!r}: set {provider.api_key_env}", parameter="api_key")

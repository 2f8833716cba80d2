"""What a run costs: a dated price table per model (shipped as `prices.yaml`, extendable by
the user's own file) and the cost of token counts under it. A model without a price has
tokens but no cost; nothing here guesses one."""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import ConfigError
from .protocol import TokenUsage

_SHIPPED = Path(__file__).with_name("prices.yaml")
#: The end of a dated snapshot's name ('-2024-07-18', '-20241022', '-0613') or of an alias
#: that follows the newest one ('-latest').
_SNAPSHOT = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest)$")


def undated(model: str) -> str:
    """The model a dated snapshot or a `-latest` alias names ('openai/gpt-4o-mini' for
    'openai/gpt-4o-mini-2024-07-18'); any other name as it is."""
    return _SNAPSHOT.sub("", model)


class Price(BaseModel):
    """US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0, description="Prompt tokens from the provider's prefix cache (default: input)")
    output: float = Field(ge=0)
    batch_share: float = Field(
        default=0.5, gt=0, le=1, description="What a call through the provider's Batch API costs, as a share of these rates"
    )

    def cost(self, usage: TokenUsage, batch: bool = False) -> float:
        """US dollars for `usage`; `batch`: the calls went through the provider's Batch API."""
        cached = min(usage.cached_prompt_tokens, usage.prompt_tokens)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        dollars = ((usage.prompt_tokens - cached) * self.input + cached * cached_rate + usage.completion_tokens * self.output) / 1_000_000
        return dollars * self.batch_share if batch else dollars


class PriceTable(BaseModel):
    model_config = ConfigDict(extra="forbid")

    as_of: str | None = None
    models: dict[str, Price] = Field(default_factory=dict)

    def price(self, model: str) -> Price | None:
        """The price of `model` ('provider/model'), or of the model it is a dated snapshot of."""
        if model in self.models:
            return self.models[model]
        return self.models.get(undated(model))

    def cost(self, model: str, usage: TokenUsage, batch: bool = False) -> float | None:
        price = self.price(model)
        return None if price is None else price.cost(usage, batch)


def user_prices_path() -> Path:
    """SCORERS_PRICES, else prices.yaml in the user's config directory."""
    configured = os.environ.get("SCORERS_PRICES")
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("llm-scorers")) / "prices.yaml"


def _read(path: Path) -> PriceTable:
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return PriceTable.model_validate(loaded)
    except OSError as exc:
        raise ConfigError(f"cannot read prices: {exc.strerror}", path) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ConfigError(f"invalid YAML: {getattr(exc, 'problem', exc)}", path, mark.line + 1 if mark else None) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(f"{'.'.join(map(str, first['loc']))}: {first['msg']}", path) from None


@cache
def _table(user_path: Path, modified: float | None) -> PriceTable:
    shipped = _read(_SHIPPED)
    if modified is None:
        return shipped
    own = _read(user_path)
    return PriceTable(as_of=own.as_of or shipped.as_of, models={**shipped.models, **own.models})


def price_table() -> PriceTable:
    """The shipped prices, with the user's file (if any) laid over them."""
    path = user_prices_path()
    modified = path.stat().st_mtime if path.is_file() else None
    if modified is None and os.environ.get("SCORERS_PRICES"):
        raise ConfigError(f"SCORERS_PRICES names {path}, which is not a file")
    return _table(path, modified)


def cost_of(model: str, usage: TokenUsage) -> float | None:
    """Estimated US dollars for `usage` of `model`; None when the model has no price."""
    return price_table().cost(model, usage)

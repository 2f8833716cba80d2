"""The judge settings of a scorer as one frozen value: which model judges (one, a jury, or a
cascade to a stronger one), how it is reached, and how long and how often it may be asked.

The command line's option groups, the Python API (`create_scorer`, `Catalog.create`), the
pytest plugin and the workbench each build one `JudgeSettings` and hand it over whole, as
httpx passes its `Timeout` and `Limits`, so a new setting is added here once and every
surface carries it. A scorer's own `judge:` block (with a catalog's `defaults:`) is the layer
under it: a setting left `None` here falls back to the environment, then to that block.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from typing import Any, Literal, get_args

from pydantic import ValidationError

from ..errors import ConfigError
from .config import JudgeConfig, Provider, StructuredMode

Aggregation = Literal["mean", "median", "majority", "strictest"]
AGGREGATIONS: tuple[str, ...] = get_args(Aggregation)


@dataclasses.dataclass(frozen=True)
class JudgeSettings:
    """How a scorer's judge is chosen and reached; `None` leaves a setting to the environment
    (SCORERS_MODEL, SCORERS_MODE, SCORERS_TIMEOUT, SCORERS_RETRIES) and the scorer's `judge:`.

    - `model`: 'provider/model' (or a full JudgeConfig) of the one judge;
    - `models` (two or more): a jury, every judge scoring each run, combined by `aggregate`
      (mean, median, majority, strictest), with `threshold` as each judge's pass line and
      `margin` as the spread that counts as disagreement;
    - `escalate_to`: a cascade, `model` scoring every run and this stronger judge the runs
      it is unsure of (its score within `margin` of `threshold`, its `samples` disagreeing);
    - `base_url`, `api_key`, `mode` (json_schema, tools, json, md_json): how it is reached;
    - `timeout` (seconds the judge may send nothing), `retries`, and the per-process limits
      `rpm` / `tpm`; `max_input_chars` replaces the scorer's own input limit.
    """

    model: str | JudgeConfig | None = None
    models: tuple[str | JudgeConfig, ...] | None = None
    aggregate: Aggregation | None = None
    threshold: float | None = None
    margin: float | None = None
    escalate_to: str | JudgeConfig | None = None
    samples: int | None = None
    base_url: str | None = None
    api_key: str | None = dataclasses.field(default=None, repr=False)
    mode: StructuredMode | None = None
    timeout: float | None = None
    retries: int | None = None
    rpm: float | None = None
    tpm: float | None = None
    max_input_chars: int | None = None

    def __post_init__(self) -> None:
        if self.models is not None and not isinstance(self.models, tuple):
            object.__setattr__(self, "models", tuple(self.models))
        if self.aggregate is not None and self.aggregate not in AGGREGATIONS:
            raise ConfigError(f"aggregate {self.aggregate!r}: choose one of {', '.join(AGGREGATIONS)}", parameter="aggregate")
        for name in ("threshold", "margin", "timeout", "rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)):
                raise ConfigError(f"judge {name} must be a finite number, got {value!r}", parameter=name)
        for name in ("samples", "max_input_chars"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigError(f"judge {name} must be a positive integer, got {value!r}", parameter=name)

    def given(self, model: str | JudgeConfig | None = None, **choice: object) -> JudgeSettings:
        """These settings with every setting given (not `None`) in place of this one's; a
        judge given (`model`, or a jury's `models`) replaces the judge chosen here."""
        changes = {name: value for name, value in {"model": model, **choice}.items() if value is not None}
        if "model" in changes or "models" in changes:
            changes = {"model": None, "models": None, **changes}
        return dataclasses.replace(self, **changes) if changes else self  # type: ignore[arg-type]

    def alone(self, model: str | JudgeConfig | None) -> JudgeSettings:
        """One judge, `model`, reached as these settings say: no jury and no cascade."""
        return dataclasses.replace(self, model=model, models=None, aggregate=None, threshold=None, margin=None, escalate_to=None, samples=None)


def resolve_judge(
    model: str | JudgeConfig | None,
    *,
    owner: str,
    settings: JudgeSettings | None = None,
    defaults: JudgeSettings | None = None,
    providers: Mapping[str, Provider] | None = None,
) -> JudgeConfig:
    """The judge of a scorer: `model` (a 'provider/model' or a full config), else
    SCORERS_MODEL, else the model of `defaults` (the scorer's `judge:` block). The base URL,
    key, mode, timeout, retries and rates of `settings` win over the environment
    (SCORERS_MODE, SCORERS_TIMEOUT, SCORERS_RETRIES), which wins over `defaults`, then the
    config's own (a full config keeps its own, but for rates it leaves unset); `providers`
    are presets beyond the built-in ones (a catalog's `providers:`). `owner` names the
    scorer in errors."""
    settings, defaults = settings or JudgeSettings(), defaults or JudgeSettings()
    default_model = defaults.model if isinstance(defaults.model, str) else None
    if isinstance(model, JudgeConfig):
        base = model
    else:
        chosen = model or os.environ.get("SCORERS_MODEL") or default_model
        if not chosen:
            raise ConfigError(f"{owner}: no judge model; set SCORERS_MODEL", parameter="model")
        base = JudgeConfig(model=chosen)
    values: dict[str, Any] = dict(base)
    if not isinstance(model, JudgeConfig):
        values.update(_config_fields(defaults))
    values.update({name: value for name, value in (("rpm", defaults.rpm), ("tpm", defaults.tpm)) if value is not None and values.get(name) is None})
    prefix = base.model.split("/", 1)[0]
    preset = (providers or {}).get(prefix) if base.preset is None else None
    if preset is not None:
        values["preset"] = preset
    environment = {"mode": "SCORERS_MODE", "timeout": "SCORERS_TIMEOUT", "http_retries": "SCORERS_RETRIES"}
    values.update({name: os.environ[variable] for name, variable in environment.items() if os.environ.get(variable)})
    values.update(_config_fields(settings))
    try:
        return JudgeConfig.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = {"http_retries": "retries"}.get(str(first["loc"][0]), ".".join(map(str, first["loc"])))
        where = {"timeout": " (--timeout, SCORERS_TIMEOUT)", "retries": " (--retries, SCORERS_RETRIES)", "mode": " (--mode, SCORERS_MODE)"}
        raise ConfigError(f"judge {field}{where.get(field, '')}: {first['msg']} (got {first.get('input')!r})") from None


def _config_fields(settings: JudgeSettings) -> dict[str, Any]:
    """The settings given (not `None`, not empty) under JudgeConfig's names."""
    given = {
        "base_url": settings.base_url, "api_key": settings.api_key, "mode": settings.mode, "timeout": settings.timeout,
        "http_retries": settings.retries, "rpm": settings.rpm, "tpm": settings.tpm,
    }
    return {name: value for name, value in given.items() if value is not None and value != ""}

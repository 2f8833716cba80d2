"""What a monitor is: which scorer's results it watches, which figure over which window,
the condition that raises an alert, and where alerts go. Written in YAML (a `monitors:`
section of a catalog, or a file of its own; every problem named by FILE:LINE at load) or
built in Python:

    monitors:
      hallucination_rising:
        scorer: hallucination
        statistic: mean            # mean, p50, p95, pass_rate, error_rate, not_scorable_rate, sampled_rate, human_agreement
        window: 50                 # the last 50 outcomes; or a time span: 30m, 6h, 7d
        above: 0.3                 # or below:
        min_samples: 20
        alert:
          - webhook_env: SLACK_WEBHOOK_URL
            format: slack
          - log: warning

`human_agreement` watches people instead of scores: the share of the newly labelled items of
the scorer's review queues (made from runs of `source`) on which the judge's verdict was the
one people settled or agreed on; `window` counts labelled items (or spans the time they were
labelled in).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Collection, Mapping
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError, ValidationInfo, field_validator, model_validator

from ..errors import ConfigError
from .setting_checks import Fact, block_said, comment_at, first_problem, held
from .source import load_yaml, locate, position, validation_error
from .suggest import did_you_mean

if TYPE_CHECKING:
    from ..scoring.plan import ScorerPlan

Statistic = Literal["mean", "p50", "p95", "pass_rate", "error_rate", "not_scorable_rate", "sampled_rate", "human_agreement"]
STATISTICS: tuple[str, ...] = Statistic.__args__  # type: ignore[attr-defined]
#: The widest windows: more outcomes than a live scorer keeps in memory or a check reads from
#: the store is a window that never fills, and a span past ten years reaches back before any result.
MOST_OUTCOMES = 1_000_000
LONGEST_SPAN = timedelta(days=3650)

_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)\s*")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_duration(text: str, what: str = "duration") -> timedelta:
    """'90s', '30m', '6h', '7d', '2w' as a timedelta; anything else is one clear error."""
    found = _DURATION.fullmatch(text)
    if found is None or float(found.group(1)) <= 0:
        raise ConfigError(f"{what} {text!r}: expected a positive number and a unit: 90s, 30m, 6h, 7d or 2w")
    try:
        return timedelta(**{_UNITS[found.group(2)]: float(found.group(1))})
    except OverflowError:
        raise ConfigError(f"{what} {text!r}: too long (at most {LONGEST_SPAN.days}d)") from None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class WebhookAlert(_Strict):
    """A JSON POST of the alert; `format: slack` sends Slack's incoming-webhook shape. A
    failed POST is retried `retries` times, waiting `backoff` seconds, then twice that, ..."""

    webhook: str | None = Field(default=None, description="The URL to POST to (http or https)")
    webhook_env: str | None = Field(default=None, description="The environment variable holding the URL (keeps a secret URL out of files)")
    format: Literal["json", "slack"] = "json"
    timeout: float = Field(
        default=30.0, gt=0, description="Seconds one POST may take (a request not answered in time is sent again, with the same episode)"
    )
    retries: int = Field(default=4, ge=0, le=10)
    backoff: float = Field(default=1.0, ge=0, description="Seconds before the first retry; doubled for each next one (at most 60)")

    @model_validator(mode="after")
    def _one_address(self) -> WebhookAlert:
        if (self.webhook is None) == (self.webhook_env is None):
            raise ValueError("give either `webhook` (the URL) or `webhook_env` (the variable holding it)")
        if self.webhook is not None:
            problem = _url_problem(self.webhook)
            if problem:
                # The URL itself is never quoted: its user-info, path or query may hold its secret.
                raise ValueError(problem)
        return self

    def url(self) -> str:
        if self.webhook is not None:
            return self.webhook
        assert self.webhook_env is not None
        value = os.environ.get(self.webhook_env, "")
        if not value.startswith(("http://", "https://")):
            raise ConfigError(f"webhook_env {self.webhook_env}: the variable is not set to an http(s) URL")
        problem = _url_problem(value)
        if problem:
            raise ConfigError(f"webhook_env {self.webhook_env}: {problem}")
        return value

    def where(self) -> str:
        """The address for messages: scheme, host and port only (a webhook's user-info, path
        and query may hold its secret)."""
        if self.webhook_env is not None:
            return f"${self.webhook_env}"
        assert self.webhook is not None
        parts = urlsplit(self.webhook)
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{parts.hostname or ''}{port}"


def _url_problem(url: str) -> str | None:
    """What keeps `url` from being a webhook's address, in words that quote none of it."""
    if not url.startswith(("http://", "https://")):
        return "expected an http:// or https:// URL"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - reading it checks the port is a number from 0 to 65535
    except ValueError as exc:
        return f"not a valid URL ({exc}); expected http(s)://host[:port]/path"
    if not parts.hostname:
        return "the URL names no host; expected http(s)://host[:port]/path"
    return None


def slack_webhook(url: str | None = None, *, env: str | None = None, **settings: Any) -> WebhookAlert:
    """The Slack preset: a webhook sending Slack's incoming-webhook message shape."""
    return WebhookAlert(webhook=url, webhook_env=env, format="slack", **settings)


class LogAlert(_Strict):
    """One line on the `engine.monitors` logger."""

    log: Literal["debug", "info", "warning", "error", "critical"] = "warning"


_DEFAULT_TARGET: WebhookAlert | LogAlert | CallbackAlert = LogAlert()


class CallbackAlert(BaseModel):
    """A Python function called with the Alert (sync or async); Python only."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    callback: Callable[[Any], Any]


def _alert_kind(value: Any) -> str | None:
    if isinstance(value, BaseModel):
        return {WebhookAlert: "webhook", LogAlert: "log", CallbackAlert: "callback"}.get(type(value))
    if isinstance(value, Mapping):
        for key, kind in (("webhook", "webhook"), ("webhook_env", "webhook"), ("log", "log"), ("callback", "callback")):
            if key in value:
                return kind
    return None


AlertTarget = Annotated[
    Union[Annotated[WebhookAlert, Tag("webhook")], Annotated[LogAlert, Tag("log")], Annotated[CallbackAlert, Tag("callback")]],
    Discriminator(
        _alert_kind,
        custom_error_type="alert_target",
        custom_error_message="an alert target is {webhook: URL}, {webhook_env: VARIABLE}, {log: LEVEL}, or in Python {callback: function}",
    ),
]


class Monitor(_Strict):
    """A condition over a window of one scorer's results; see the module docstring."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    name: str = Field(default="", description="Set from the key in YAML")
    scorer: str = Field(description="The scorer id whose results are watched (as stored: a variant is `id@label`)")
    statistic: Statistic
    above: float | None = Field(default=None, description="Alert while the statistic is above this")
    below: float | None = Field(default=None, description="Alert while the statistic is below this")
    threshold: float | None = Field(default=None, description="The pass mark of pass_rate (a score at it passes)")
    window: Union[int, str] = Field(default=100, description="The last N outcomes (a number), or a time span: 30m, 6h, 7d")
    min_samples: int = Field(default=10, ge=1, description="No alert and no recovery on fewer outcomes (replies seen, for sampled_rate)")
    run: str | None = Field(default=None, description="Only results of this run (default: every run of `source`)")
    source: Literal["live", "batch", "any"] = "live"
    worst: int = Field(default=3, ge=0, le=20, description="How many worst items an alert names")
    alert: list[AlertTarget] = Field(default_factory=lambda: [_DEFAULT_TARGET])

    @field_validator("window")
    @classmethod
    def _window(cls, value: int | str) -> int | str:
        if isinstance(value, int):
            if value < 1:
                raise ValueError("a window of outcomes must hold at least 1")
            if value > MOST_OUTCOMES:
                raise ValueError(f"a window of {value} outcomes is more than a monitor reads (at most {MOST_OUTCOMES}): write a time span (30m, 6h, 7d) for a longer one")
            return value
        try:
            span = parse_duration(value, "window")
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        if span > LONGEST_SPAN:
            raise ValueError(f"window {value!r}: too long (at most {LONGEST_SPAN.days}d)")
        return value

    @field_validator("above", "below")
    @classmethod
    def _not_nan(cls, value: float | None, info: ValidationInfo) -> float | None:
        """NaN and infinity are no number a statistic can be past (the units of a condition
        are held in setting_rules.py)."""
        if value is not None and not math.isfinite(value):
            raise ValueError(f"no value is {info.field_name} {'NaN (.nan)' if math.isnan(value) else f'{value:g}'}: the monitor would never alert")
        return value

    @model_validator(mode="after")
    def _condition(self) -> Monitor:
        if (self.above is None) == (self.below is None):
            raise ValueError(f"monitor {self.name or self.scorer!r}: give exactly one of `above` and `below` (the condition that alerts)")
        return self

    @property
    def span(self) -> timedelta | None:
        """The time span of the window; None for a window of the last N outcomes."""
        return parse_duration(self.window, "window") if isinstance(self.window, str) else None

    def condition(self) -> str:
        return f"{self.statistic} above {self.above:g}" if self.above is not None else f"{self.statistic} below {self.below:g}"

    def window_text(self) -> str:
        return f"last {self.window}" if isinstance(self.window, str) else f"last {self.window} outcomes"

    def holds(self, value: float) -> bool:
        """Whether the condition holds for this value of the statistic."""
        if self.above is not None:
            return value > self.above
        assert self.below is not None  # one of the two, checked when the monitor is made
        return value < self.below


class _MonitorsSection(_Strict):
    monitors: dict[str, Monitor]


def load_monitors(path: str | Path, known_scorers: Collection[str] | None = None) -> list[Monitor]:
    """The monitors of a YAML file's `monitors:` section (a catalog or a file of its own).
    `known_scorers` (a catalog's ids) makes an unknown scorer id an error at its line."""
    path = Path(path)
    data = load_yaml(path)
    if not isinstance(data, Mapping) or not isinstance(data.get("monitors"), Mapping):
        raise ConfigError("no `monitors:` section (a mapping of monitor names to monitors)", path, locate(data, [])[1])
    return monitors_in(data, path, known_scorers)


def monitors_in(
    data: Mapping[str, Any],
    path: Path,
    known_scorers: Collection[str] | None = None,
    score_ranges: Mapping[str, tuple[float, float]] | None = None,
    directions: Mapping[str, str] | None = None,
) -> list[Monitor]:
    """The monitors of the `monitors:` section of a YAML file's data (none without one).
    `score_ranges` (the range of each scorer's scores, when known) makes a condition on the
    scores (`mean`, `p50`, `p95`) that no score can meet an error at its line; `directions`
    (which way each scorer's scores are better) one that alerts on a perfect run, or never
    on the worst."""
    if data.get("monitors") is None:
        return []
    try:
        section = _MonitorsSection.model_validate({"monitors": data["monitors"]})
    except ValidationError as exc:
        raise validation_error(exc, data, "", path, _MonitorsSection) from None
    monitors = []
    for name, monitor in section.monitors.items():
        if known_scorers is not None and monitor.scorer.split("@", 1)[0] not in known_scorers:
            file, line = locate(data, ["monitors", name, "scorer"])
            hint = did_you_mean(monitor.scorer, list(known_scorers))
            raise ConfigError(f"monitors.{name}.scorer: unknown scorer {monitor.scorer!r}{hint}", file or path, line)
        scorer = monitor.scorer.split("@", 1)[0]
        written = data["monitors"][name]
        problem = first_problem(held("monitors.*", f"monitors.{name}", written, _facts(scorer, score_ranges)), written)
        if problem is not None:
            raise ConfigError(problem[0], *(problem[1] or (path, None, None)))
        direction = (directions or {}).get(scorer)
        if direction is not None:
            _points_the_right_way(monitor, name, direction, (score_ranges or {}).get(scorer), data, path)
        monitors.append(monitor.model_copy(update={"name": name}))
    return monitors


def _facts(scorer: str, score_ranges: Mapping[str, tuple[float, float]] | None) -> dict[str, Fact]:
    """What a monitor's settings are held to: the range of its scorer's scores, when known."""
    span = (score_ranges or {}).get(scorer)
    return {"score_range": lambda _: span, "scores": lambda _: f"{scorer}'s scores"}


def monitor_warnings(data: Mapping[str, Any], path: Path, plan_of: Callable[[str], ScorerPlan | None]) -> list[ConfigError]:
    """The warnings of the settings of a catalog's monitors (their rows in setting_rules.py
    with a code: a condition on a wide scale written as a fraction of it), each held to the
    range of its scorer's scores; their problems are monitors_in's."""
    from .warning import CatalogWarning

    section = data.get("monitors")
    found: list[ConfigError] = []
    for name, written in section.items() if isinstance(section, Mapping) else ():
        plan = plan_of(str(written.get("scorer", "")).split("@", 1)[0]) if isinstance(written, Mapping) else None
        if plan is None:
            continue
        said, rate = block_said(section, name), _sampled_at(data, plan.id)
        window_said = comment_at(written, "window") if isinstance(written, Mapping) else ""
        facts: dict[str, Fact] = {**_watched_facts(plan), "said_of_owner": lambda _: said, "sampling_rate": lambda _: rate, "window_comment": lambda _: window_said}
        for each in held("monitors.*", f"monitors.{name}", written, facts):
            if each.code is not None:
                place = position(section, [name, *each.loc], value=True)
                found.append(CatalogWarning(each.message, *(place or (str(path), None, None)), code=each.code))
    return found


def _sampled_at(data: Mapping[str, Any], scorer_id: str) -> float | None:
    """The share of replies the catalog's `traces:` section samples a scorer at, when it says."""
    traces = data.get("traces")
    rate = traces.get("sampling") if isinstance(traces, Mapping) else None
    rate = rate.get(scorer_id) if isinstance(rate, Mapping) else rate
    return float(rate) if isinstance(rate, (int, float)) and not isinstance(rate, bool) else None


def _watched_facts(plan: ScorerPlan) -> dict[str, Fact]:
    """What a monitor's settings are held to, from the plan of the scorer it watches."""
    span = plan.scores_range(plan.options_model())
    said = " (the `scale` option)" if plan.on_scale else ""
    return {
        "score_range": lambda _: span, "scores": lambda _: f"{plan.id}'s scores", "scale_said": lambda _: said,
        "own_pass_line": lambda _: plan.threshold, "direction": lambda _: plan.direction,
        "asks_judge": lambda _: any(step.sampling is not None for step in plan.steps), "scorer_id": lambda _: plan.id,
    }


def as_monitors(monitors: Any) -> list[Monitor]:
    """Monitors from what a caller passes: Monitor objects, or the path of a YAML file."""
    if monitors is None:
        return []
    if isinstance(monitors, (str, Path)):
        return load_monitors(monitors)
    found = [monitors] if isinstance(monitors, Monitor) else list(monitors)
    for monitor in found:
        if not isinstance(monitor, Monitor):
            raise ConfigError(f"monitors must be Monitor objects or a YAML file path, got {type(monitor).__name__}")
        written = monitor.model_dump(exclude={"alert"})
        problem = first_problem(held("monitors.*", f"monitor {monitor.name or monitor.scorer}", written, _facts(monitor.scorer, None)), written)
        if problem is not None:
            raise ConfigError(problem[0])
    names = [monitor.name or monitor.scorer for monitor in found]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ConfigError(f"two monitors named {', '.join(repeated)}: give each its own `name`")
    return [monitor if monitor.name else monitor.model_copy(update={"name": monitor.scorer}) for monitor in found]


#: The statistics that are shares of the outcomes, by which end a perfect run has: 1 or 0
#: (sampled_rate, the share of replies scored, has no better end).
_PERFECT_AT_ONE = ("pass_rate", "human_agreement")
_PERFECT_AT_ZERO = ("error_rate", "not_scorable_rate")
_RATES = (*_PERFECT_AT_ONE, *_PERFECT_AT_ZERO, "sampled_rate")


def _points_the_right_way(monitor: Monitor, name: str, direction: str, score_range: tuple[float, float] | None, data: Mapping[str, Any], path: Path) -> None:
    """A monitor alerts on bad runs: one whose condition holds for a perfect run (every score
    the best, nothing failed) points against its scorer's direction."""
    if monitor.statistic in _RATES:
        if monitor.statistic == "sampled_rate":
            return
        perfect, worst = (1.0, 0.0) if monitor.statistic in _PERFECT_AT_ONE else (0.0, 1.0)
    elif score_range is not None:
        low, high = score_range
        perfect, worst = (low, high) if direction == "lower_is_better" else (high, low)
    else:
        return
    condition, value = ("above", monitor.above) if monitor.above is not None else ("below", monitor.below)
    other = "below" if condition == "above" else "above"
    place = position(data, ["monitors", name, condition], value=True)
    better = "lower" if direction == "lower_is_better" else "higher"
    about = f"{monitor.scorer}'s scores are better {better}" if monitor.statistic not in _RATES else f"a perfect run's {monitor.statistic} is {perfect:g}"
    if monitor.holds(perfect):
        raise ConfigError(
            f"monitors.{name}.{condition}: a perfect run alerts: {about}, and a {monitor.statistic} of {perfect:g} is {condition} {value:g}; "
            f"the condition points the wrong way (did you mean `{other}:`?)",
            *(place or (path, None, None)),
        )
    if not monitor.holds(worst):
        raise ConfigError(
            f"monitors.{name}.{condition}: the worst run never alerts: {about}, and the worst {monitor.statistic}, {worst:g}, is not {condition} {value:g}; "
            f"the condition points the wrong way (did you mean `{other}:`?)",
            *(place or (path, None, None)),
        )

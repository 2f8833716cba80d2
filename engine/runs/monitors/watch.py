"""A monitor's window and state: the outcomes in its window become figures (by the one
function every view uses, `window_figures`), and a change of whether the condition holds
becomes one alert (it started) or one recovery (it ended). Nothing fires on fewer outcomes
than `min_samples`, so three items do not page anyone."""

from __future__ import annotations

import threading
import uuid
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, Field

from ...scoring.pass_line import Direction
from ...store import AlertRecord, Outcome, ResultRecord
from ..measures.stats import window_figures
from ...catalog.monitors import Monitor

#: What became of one reply for a monitor's scorer: an outcome, or (sampled_rate only)
#: whether the reply was queued for the scorer at all.
PointKind = Literal["scored", "error", "not_scorable", "sampled", "unsampled"]
State = Literal["ok", "alerting", "too few"]


@dataclass(frozen=True)
class Point:
    at: datetime
    kind: PointKind
    item_id: str = ""
    score: float | None = None
    reason: str | None = None
    direction: Direction = "higher_is_better"

    @classmethod
    def of(cls, record: ResultRecord) -> Point:
        outcome: Outcome = record.outcome
        reason = record.error or record.not_scorable or record.reason
        return cls(record.finished_at, outcome, record.item_id, record.score, reason, record.direction)


class WindowFigures(BaseModel):
    """A scorer's outcomes over a monitor's window (from `stats.window_figures`): the spread of
    its scores, and the shares of errors, of replies it could not judge, and (live only) of
    replies it was sampled for."""

    outcomes: int = 0
    scored: int = 0
    mean: float | None = None
    p50: float | None = None
    p95: float | None = None
    pass_rate: float | None = None
    threshold: float | None = None
    error_rate: float | None = None
    not_scorable_rate: float | None = None
    sampled_rate: float | None = None
    human_agreement: float | None = Field(default=None, description="The share of labelled items on which the judge's verdict was people's")


class WorstItem(BaseModel):
    item_id: str
    score: float | None = None
    reason: str | None = None


class WindowSpan(BaseModel):
    size: str = Field(description="As the monitor says: 'last 50 outcomes' or 'last 1h'")
    first_at: datetime | None = None
    last_at: datetime | None = None
    samples: int = Field(default=0, description="Outcomes in the window (replies seen, for sampled_rate)")


class Alert(BaseModel):
    """What a monitor sends when its condition starts holding (`alert`) or stops (`recovery`)."""

    monitor: str
    scorer: str
    kind: Literal["alert", "recovery"]
    statistic: str
    value: float | None
    condition: str
    window: WindowSpan
    figures: WindowFigures
    worst: list[WorstItem] = Field(default_factory=list)
    run: str | None = None
    at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    episode: str | None = Field(default=None, description="The episode this alert opens or this recovery closes: a receiver de-duplicates on it")

    def message(self) -> str:
        """One line for a log or a chat message."""
        value = "n/a" if self.value is None else f"{self.value:.3g}"
        if self.kind == "alert":
            head = f"ALERT {self.monitor}: {self.scorer} {self.statistic} is {value} ({self.condition})"
        else:
            head = f"RECOVERED {self.monitor}: {self.scorer} {self.statistic} is {value}, no longer {self.condition.split(' ', 1)[1]}"
        line = f"{head} over the {self.window.size} ({self.window.samples} samples)"
        if self.worst and self.kind == "alert":
            line += "; worst: " + ", ".join(f"{item.item_id} ({'error' if item.score is None else f'{item.score:.3g}'})" for item in self.worst)
        return line

    def record(self) -> AlertRecord:
        return AlertRecord(
            monitor=self.monitor, scorer_id=self.scorer, kind=self.kind, value=self.value, message=self.message(),
            payload=self.model_dump(mode="json"), fired_at=self.at, episode=self.episode,
        )


class MonitorCheck(BaseModel):
    """A monitor's state now: its window's figures, the watched value, and the alert this
    check fired (when the state changed)."""

    monitor: str
    scorer: str
    condition: str
    window: WindowSpan
    figures: WindowFigures
    value: float | None
    state: State
    alert: Alert | None = None
    note: str | None = None


def value_of(monitor: Monitor, figures: WindowFigures) -> float | None:
    value: float | None = getattr(figures, monitor.statistic)
    return value


def in_window(monitor: Monitor, points: Sequence[Point], now: datetime) -> list[Point]:
    """The points of `points` (oldest first) that the monitor's window holds at `now`."""
    span = monitor.span
    if span is not None:
        return [point for point in points if point.at >= now - span]
    return list(points[-int(monitor.window) :])


def check(monitor: Monitor, points: Sequence[Point], alerting: bool, now: datetime | None = None, episode: str | None = None) -> MonitorCheck:
    """The monitor's state over `points` (oldest first, already cut to its window), given
    whether it was alerting before (in `episode`); a change of state carries the alert to
    send: an alert opens a new episode, a recovery closes the one it was in."""
    now = now or datetime.now(timezone.utc)
    direction: Direction = next((point.direction for point in points if point.kind in ("scored", "error", "not_scorable")), "higher_is_better")
    scores = [point.score for point in points if point.kind == "scored" and point.score is not None]
    seen = [point for point in points if point.kind in ("sampled", "unsampled")]
    figures = WindowFigures.model_validate(
        window_figures(
            scores,
            errors=sum(point.kind == "error" for point in points),
            not_scorable=sum(point.kind == "not_scorable" for point in points),
            direction=direction,
            threshold=monitor.threshold,
            sampled=(sum(point.kind == "sampled" for point in seen), len(seen)) if seen else None,
        )
    )
    if monitor.statistic == "human_agreement":  # each point an item people labelled: 1 the judge agreed, 0 not
        figures = WindowFigures(outcomes=len(scores), scored=len(scores), human_agreement=sum(scores) / len(scores) if scores else None)
    samples = len(seen) if monitor.statistic == "sampled_rate" else figures.outcomes
    span = WindowSpan(size=monitor.window_text(), first_at=points[0].at if points else None, last_at=points[-1].at if points else None, samples=samples)
    value = value_of(monitor, figures)
    common = dict(monitor=monitor.name, scorer=monitor.scorer, condition=monitor.condition(), window=span, figures=figures, value=value)
    if samples < monitor.min_samples:
        return MonitorCheck(**common, state="too few", note=f"{samples} of the {monitor.min_samples} samples needed")  # type: ignore[arg-type]
    if value is None:  # enough outcomes, none with what the statistic reads (every one an error, say)
        return MonitorCheck(**common, state="too few", note=f"no {monitor.statistic} over the {samples} outcomes: {_why_none(figures)}")  # type: ignore[arg-type]
    holding = monitor.holds(value)
    alert = None
    if holding != alerting:
        alert = Alert(
            monitor=monitor.name, scorer=monitor.scorer, kind="alert" if holding else "recovery", statistic=monitor.statistic, value=value,
            condition=monitor.condition(), window=span, figures=figures, worst=worst_items(monitor, points, direction), run=monitor.run, at=now,
            episode=uuid.uuid4().hex if holding else episode,
        )
    return MonitorCheck(**common, state="alerting" if holding else "ok", alert=alert)  # type: ignore[arg-type]


def _why_none(figures: WindowFigures) -> str:
    if not figures.scored:
        return "none was scored (each failed or was not scorable)"
    return "the statistic needs what the window lacks"


def worst_items(monitor: Monitor, points: Iterable[Point], direction: Direction) -> list[WorstItem]:
    """The items that weigh most on the watched figure: the failures for error and
    not-scorable rates, otherwise the lowest scores (highest, for lower-is-better scorers)."""
    if monitor.worst == 0 or monitor.statistic == "sampled_rate":
        return []
    if monitor.statistic in ("error_rate", "not_scorable_rate"):
        kind = "error" if monitor.statistic == "error_rate" else "not_scorable"
        failed = [point for point in points if point.kind == kind][-monitor.worst :]
        return [WorstItem(item_id=point.item_id, reason=point.reason) for point in reversed(failed)]
    scored = [(point.score, point) for point in points if point.kind == "scored" and point.score is not None]
    scored.sort(key=lambda pair: -pair[0] if direction == "lower_is_better" else pair[0])
    return [WorstItem(item_id=point.item_id, score=score, reason=point.reason) for score, point in scored[: monitor.worst]]


class MonitorWatch:
    """One monitor inside a live scorer: its window in memory and whether it is alerting.
    Thread-safe: replies are seen on the host's threads, outcomes arrive on the scoring loop."""

    def __init__(self, monitor: Monitor, alerting: bool = False, episode: str | None = None) -> None:
        self.monitor = monitor
        #: Whether it is alerting, and in which episode: restored from the store's last alert,
        #: so a restarted host does not alert again for an episode already alerted.
        self.alerting = alerting
        self.episode = episode
        self.last: MonitorCheck | None = None
        self._lock = threading.Lock()
        keep = None if monitor.span is not None else int(monitor.window)
        self._points: deque[Point] = deque(maxlen=keep)

    def wants(self, record: ResultRecord) -> bool:
        monitor = self.monitor
        return (
            record.scorer_id == monitor.scorer
            and (monitor.run is None or record.run == monitor.run)
            and (monitor.source == "any" or record.source == monitor.source)
        )

    def add(self, point: Point) -> Alert | None:
        """Count one point and check the condition; the alert when the state changed."""
        now = datetime.now(timezone.utc)
        with self._lock:
            self._points.append(point)
            span = self.monitor.span
            while span is not None and self._points and self._points[0].at < now - span:
                self._points.popleft()
            result = check(self.monitor, list(self._points), self.alerting, now, self.episode)
            self.last = result
            if result.alert is not None:
                self.alerting = result.alert.kind == "alert"
                self.episode = result.alert.episode if self.alerting else None
            return result.alert

    def join(self, episode: str | None) -> None:
        """Another process kept the alert that opened the episode first: this watch is in
        that episode now, so that its recovery closes it."""
        with self._lock:
            if self.alerting:
                self.episode = episode

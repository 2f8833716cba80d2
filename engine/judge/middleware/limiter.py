"""Staying under a provider's limits: requests and tokens per minute per model, shared by
every scorer, item and live scorer of the process, and fewer calls in flight when the
provider answers 429.

Who retries: the `openai` SDK already retries a 429 (and 5xx) itself, waiting what
`retry-after-ms` / `retry-after` say. Retrying here too would multiply the attempts, so the
limiter never retries: it *observes* every HTTP response (through the client's response hook,
including the ones the SDK retries) and makes every other call to the same model wait too,
which the SDK alone cannot do:
- a 429 pauses the model until its `retry-after-ms` / `retry-after` / `x-ratelimit-reset-*`
  time (1 s when none is given) and halves the calls allowed in flight;
- a success raises that allowance again by one call per window of calls (additive increase),
  until it no longer binds;
- `x-ratelimit-remaining-requests: 0` (or `-tokens: 0`) on a success pauses the model until
  the matching `x-ratelimit-reset-*` time, before it answers 429 at all.
`rpm` and `tpm` pace requests evenly (one every 60/rpm seconds; a request's tokens hold the
next one back by tokens * 60/tpm seconds), so a configured rate holds over any window longer
than a few calls. A request's tokens are estimated when it leaves, not when it starts
waiting: its prompt from its characters, at the tokens per character the model's reported
usage showed so far, and its answer as long as the step's answers have been (at most
`max_tokens`; before any answer, `max_tokens`). The first call under `tpm` goes alone to
teach the estimates; the difference between a call's estimate and its usage is settled when
the usage arrives, and the calls still waiting see the settlement, so an estimate that was off
does not hold back (or let through) a whole burst.
"""

from __future__ import annotations

import asyncio
import math
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone

from ..config import JudgeConfig
from ..protocol import CallNext, JudgeAnswer, JudgeRequest, TokenUsage

#: Seconds a model is paused after a 429 that does not say how long to wait.
DEFAULT_PAUSE = 1.0
#: How often a call held back by the in-flight allowance looks again. Calls wait like this
#: only while a model is being throttled, and from any event loop of the process.
_POLL = 0.02
#: How often a call waiting for its share of `tpm` looks whether earlier calls' settlements moved its turn.
_SETTLING = 0.05
#: How late an `asyncio.sleep` may wake on a busy machine: a call leaving this late keeps the pace.
_WAKE_UP = 0.02
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


def parse_duration(text: str) -> float | None:
    """Seconds in an `x-ratelimit-reset-*` value: '1s', '6m0s', '20ms', '0.5s', or a bare number."""
    text = text.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        return None
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    return sum(float(number) * scale[unit] for number, unit in parts)


def retry_delay(headers: Mapping[str, str]) -> float | None:
    """How long the provider asks to wait, in seconds, from the headers of a 429."""
    if (milliseconds := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    if (after := headers.get("retry-after")) is not None:
        try:
            return max(0.0, float(after))
        except ValueError:
            from email.utils import (
                parsedate_to_datetime,  # an HTTP date: rare, so imported when met
            )

            try:
                moment = parsedate_to_datetime(after)
            except (TypeError, ValueError):
                moment = None
            if moment is not None:
                return max(0.0, (moment - datetime.now(timezone.utc)).total_seconds())
    resets = [parse_duration(headers[name]) for name in ("x-ratelimit-reset-requests", "x-ratelimit-reset-tokens") if name in headers]
    known = [value for value in resets if value is not None]
    return max(known) if known else None


@dataclass
class LimiterStats:
    """What a progress display shows about one model's limiter."""

    model: str
    rate_limited: int  # 429 answers seen
    paused_for: float  # seconds until calls may start again (0: not paused)
    allowed_in_flight: int | None  # None: not reduced
    in_flight: int
    rpm: float | None
    tpm: float | None


class ModelLimiter:
    """The limits of one model at one endpoint, shared by the whole process (every event
    loop, every thread): thread-safe, and waiting with `asyncio.sleep` on the caller's loop."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.rpm: float | None = None
        self.tpm: float | None = None
        self._lock = threading.Lock()
        self._next_request = 0.0  # monotonic time from which the next request may start
        self._next_tokens = 0.0  # the same for the token budget
        self.paused_until = 0.0
        self.allowed: float = math.inf  # calls in flight allowed (inf: not reduced)
        self.in_flight = 0
        self.rate_limited = 0
        self._last_cut = 0.0
        self._taught = False  # a call under `tpm` has come back: the others need not go alone
        self._tokens_per_character: float | None = None  # of prompts, from reported usage, smoothed
        self._answer_tokens: dict[str, float] = {}  # by step: its answers' tokens, smoothed

    def configure(self, rpm: float | None, tpm: float | None) -> None:
        """Set the rates (the latest setting wins; None leaves a rate as it is)."""
        with self._lock:
            self.rpm = rpm if rpm is not None else self.rpm
            self.tpm = tpm if tpm is not None else self.tpm

    def stats(self) -> LimiterStats:
        with self._lock:
            return LimiterStats(
                model=self.model,
                rate_limited=self.rate_limited,
                paused_for=max(0.0, self.paused_until - time.monotonic()),
                allowed_in_flight=None if math.isinf(self.allowed) else int(self.allowed),
                in_flight=self.in_flight,
                rpm=self.rpm,
                tpm=self.tpm,
            )

    async def acquire(self, size: RequestSize) -> float:
        """Wait for this call's turn: after any pause, at the paced rates, within the
        allowance. Returns the tokens the call was charged (to settle in `release`)."""
        while self.tpm is not None and not self._taught and self.in_flight > 0:
            await asyncio.sleep(_POLL)  # the first call's usage teaches the estimates their scale
        while True:
            with self._lock:
                now = time.monotonic()
                turn = max(self.paused_until, self._next_request if self.rpm is not None else 0.0, self._next_tokens if self.tpm is not None else 0.0)
                if turn <= now:
                    if self.in_flight < self.allowed:
                        self.in_flight += 1
                        return self._take_turn(size, now)
                    turn = now + _POLL  # held back by the allowance in flight
            # Under `tpm` the turn moves as earlier calls settle: look again now and then.
            await asyncio.sleep(min(turn - now, _SETTLING) if self.tpm is not None else turn - now)

    def _take_turn(self, size: RequestSize, now: float) -> float:
        """The turns after a call leaving `now`, from the rates; the tokens it is charged."""
        if self.rpm is not None:
            self._next_request = _after(self._next_request, now, 60.0 / self.rpm)
        if self.tpm is None:
            return 0.0
        charged = self._estimate(size)
        self._next_tokens = _after(self._next_tokens, now, charged * 60.0 / self.tpm)
        return charged

    def _estimate(self, size: RequestSize) -> float:
        prompt = size.characters * (self._tokens_per_character or 0.25) + 1
        answer = self._answer_tokens.get(size.step, size.max_tokens or 0)
        return prompt + (min(answer, size.max_tokens) if size.max_tokens else answer)

    def release(self, size: RequestSize, charged: float, usage: TokenUsage | None, succeeded: bool) -> None:
        with self._lock:
            self.in_flight -= 1
            if self.tpm is not None:
                self._taught = True
                if usage is not None and usage.total_tokens:
                    # Settle the difference between what the call was charged and what it used.
                    self._next_tokens += (usage.total_tokens - charged) * 60.0 / self.tpm
                    self._learn(size, usage)
            if succeeded and not math.isinf(self.allowed):
                self.allowed += 1.0 / self.allowed
                if self.allowed > 2 * max(self.in_flight, 1) + 64:
                    self.allowed = math.inf  # no longer the bound: stop counting

    def _learn(self, size: RequestSize, usage: TokenUsage) -> None:
        if usage.prompt_tokens and size.characters:
            self._tokens_per_character = _smoothed(self._tokens_per_character, usage.prompt_tokens / size.characters)
        self._answer_tokens[size.step] = _smoothed(self._answer_tokens.get(size.step), usage.completion_tokens)

    def observe(self, status: int, headers: Mapping[str, str]) -> None:
        """Read one HTTP response of this model (called by the client for every response)."""
        now = time.monotonic()
        if status == 429:
            delay = retry_delay(headers)
            with self._lock:
                self.rate_limited += 1
                self.paused_until = max(self.paused_until, now + (DEFAULT_PAUSE if delay is None else delay))
                # One cut per burst of 429s: the answers to calls sent together arrive together.
                if now - self._last_cut > 1.0:
                    self.allowed = max(1.0, min(self.allowed, self.in_flight) / 2)
                    self._last_cut = now
            return
        for remaining, reset in (("x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"), ("x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens")):
            if headers.get(remaining, "").strip() == "0" and reset in headers:
                wait = parse_duration(headers[reset])
                if wait:
                    with self._lock:
                        self.paused_until = max(self.paused_until, now + wait)


def _smoothed(known: float | None, seen: float) -> float:
    """An estimate moved a fifth of the way towards what was just seen (the first sighting as it is)."""
    return seen if known is None else 0.8 * known + 0.2 * seen


def _after(turn: float, now: float, spacing: float) -> float:
    """The next turn after a call whose turn was `turn` and that left `now`: `spacing` after
    its turn when it left no later than a sleep wakes late (so the rate does not drift), else
    `spacing` after now (a call held back by the other rate, or a model left idle, does not
    let the next ones leave closer together)."""
    return (turn if now - turn <= _WAKE_UP else now) + spacing


_limiters: dict[tuple[str, str], ModelLimiter] = {}
_registry_lock = threading.Lock()


def limiter_for(endpoint: str, model: str) -> ModelLimiter:
    """The process's limiter of `model` at `endpoint` (created on first use)."""
    with _registry_lock:
        limiter = _limiters.get((endpoint, model))
        if limiter is None:
            limiter = _limiters[(endpoint, model)] = ModelLimiter(model)
        return limiter


def throttling() -> list[LimiterStats]:
    """The limiters of this process that are holding calls back right now, or have been
    answered 429 (for a progress display)."""
    with _registry_lock:
        limiters = list(_limiters.values())
    found = []
    for limiter in limiters:
        stats = limiter.stats()
        if stats.paused_for > 0 or stats.allowed_in_flight is not None or stats.rate_limited:
            found.append(stats)
    return found


@dataclass(frozen=True)
class RequestSize:
    """What a request's tokens are estimated from before it is sent."""

    characters: int  # of its messages
    max_tokens: int | None
    step: str

    @classmethod
    def of(cls, request: JudgeRequest) -> RequestSize:
        characters = sum(len(str(message.get("content", ""))) for message in request.messages)
        return cls(characters, request.sampling.max_tokens, request.step)


class RateLimit:
    """The middleware: each call waits its turn at its model's limiter. The limiter is found
    on the first call (the endpoint, and so a missing key, is resolved then, not when a
    scorer is created) and given `rpm` / `tpm` when they are set."""

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self._limiter: ModelLimiter | None = None

    @property
    def limiter(self) -> ModelLimiter:
        if self._limiter is None:
            base_url, _ = self.config.endpoint()
            limiter = limiter_for(base_url or self.config.provider, self.config.model)
            if self.config.rpm is not None or self.config.tpm is not None:
                limiter.configure(self.config.rpm, self.config.tpm)
            self._limiter = limiter
        return self._limiter

    def observe(self, status: int, headers: Mapping[str, str]) -> None:
        self.limiter.observe(status, headers)

    async def __call__(self, request: JudgeRequest, call_next: CallNext) -> JudgeAnswer:
        limiter = self.limiter
        size = RequestSize.of(request) if limiter.tpm is not None else _UNSIZED
        charged = await limiter.acquire(size)
        answer: JudgeAnswer | None = None
        try:
            answer = await call_next(request)
            return answer
        finally:
            limiter.release(size, charged, answer.usage if answer is not None else None, succeeded=answer is not None)


_UNSIZED = RequestSize(0, None, "")  # a call to a model without `tpm`: its size is not needed

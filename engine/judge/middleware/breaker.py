"""Fail fast on a judge that cannot answer, instead of failing every item one by one.

Per judge endpoint and model (shared by every scorer calling it in one event loop):

- Until one call has succeeded, calls go one at a time. A judge that refuses the key, does
  not know the model, rejects the response format or cannot be reached then costs one
  request, and every call waiting behind it gets the same error without a request.
- Failures that no retry can mend are of kinds that stop a batch run: the provider adapter
  raises those for a refused key, an unknown model and an unsupported response format; here
  a server that could not be reached, or did not answer in time after every retry, before
  any call succeeded becomes `JudgeNeverReachedError` or `JudgeNeverAnsweredError` (once the
  judge has answered, losing it is left to the retries and to the count below).
- When the last `failures_to_open` calls all failed, the circuit opens: the failure that opened it
  becomes a `JudgeCircuitOpenError` (which stops a run), and calls fail at once until one
  probe call goes through: 2 seconds after it opened, then twice as long after each probe
  that fails, at most `cooldown` seconds (a long-lived live scorer is back within seconds of
  its judge); a probe also goes through `cooldown` seconds after a fatal failure, in case
  the key or the server was fixed meanwhile.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from dataclasses import dataclass, field

from ...errors import (
    JudgeCircuitOpenError,
    JudgeError,
    JudgeNeverAnsweredError,
    JudgeNeverReachedError,
    JudgeTimeoutError,
    JudgeUnreachableError,
)
from ..protocol import CallNext, JudgeAnswer, JudgeRequest


@dataclass
class _Circuit:
    proven: bool = False
    failures: int = 0
    last_error: str = ""
    opened_at: float | None = None
    fatal: JudgeError | None = None
    fatal_at: float = 0.0
    open_for: float = 0.0  # how long the circuit stays open before the next probe
    probe: asyncio.Lock = field(default_factory=asyncio.Lock)


_circuits: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Circuit]] = weakref.WeakKeyDictionary()


class CircuitBreaker:
    """See the module docstring. `endpoint` names the judge (model and base URL)."""

    def __init__(self, endpoint: str, failures_to_open: int = 10, cooldown: float = 30.0, first_probe: float = 2.0) -> None:
        self.endpoint = endpoint
        self.failures_to_open = failures_to_open
        self.cooldown = cooldown
        self.first_probe = min(first_probe, cooldown)

    def _circuit(self) -> _Circuit:
        per_loop = _circuits.setdefault(asyncio.get_running_loop(), {})
        return per_loop.setdefault(self.endpoint, _Circuit())

    async def __call__(self, request: JudgeRequest, call_next: CallNext) -> JudgeAnswer:
        circuit = self._circuit()
        self._refuse_if_open(circuit, request)
        if circuit.proven:
            return await self._call(circuit, request, call_next)
        async with circuit.probe:
            self._refuse_if_open(circuit, request)
            if not circuit.proven:
                return await self._call(circuit, request, call_next)
        return await self._call(circuit, request, call_next)

    def _refuse_if_open(self, circuit: _Circuit, request: JudgeRequest) -> None:
        if circuit.fatal is not None:
            if time.monotonic() - circuit.fatal_at >= self.cooldown:
                circuit.fatal, circuit.proven = None, False  # probe again
            else:
                error = circuit.fatal
                raise type(error)(error.message, request.step, parameter=error.parameter)
        if circuit.opened_at is not None:
            waited = time.monotonic() - circuit.opened_at
            if waited < circuit.open_for:
                left = circuit.open_for - waited
                raise JudgeCircuitOpenError(
                    f"not calling {self.endpoint} for {left:.0f}s more: its last {self.failures_to_open} calls "
                    f"all failed (the last: {circuit.last_error})",
                    request.step,
                    retry_after=left,
                )
            circuit.opened_at = None  # half-open: this call is the probe

    async def _call(self, circuit: _Circuit, request: JudgeRequest, call_next: CallNext) -> JudgeAnswer:
        try:
            answer = await call_next(request)
        except JudgeError as error:
            counted = self._failed(circuit, error)
            if counted is error:
                raise
            raise counted from error
        circuit.proven = True
        circuit.failures = 0
        circuit.open_for = 0.0
        return answer

    def _failed(self, circuit: _Circuit, error: JudgeError) -> JudgeError:
        """Counts a failure; the error to raise: `error`, or one of a kind that stops a run
        when no call to this judge has succeeded yet or too many in a row failed."""
        circuit.failures += 1
        circuit.last_error = error.message
        if not circuit.proven and not error.stops_run:
            if isinstance(error, JudgeUnreachableError):
                error = JudgeNeverReachedError(error.message, error.step, parameter=error.parameter)
            elif isinstance(error, JudgeTimeoutError):
                error = JudgeNeverAnsweredError(error.message, error.step, parameter=error.parameter)
        if error.stops_run:
            circuit.fatal, circuit.fatal_at = error, time.monotonic()
        elif circuit.failures >= self.failures_to_open or circuit.open_for:  # a failed probe opens it again, for longer
            reopened = bool(circuit.open_for)
            circuit.open_for = min(2 * circuit.open_for, self.cooldown) if reopened else self.first_probe
            what = "a probe call after the judge calls before it" if reopened else f"{circuit.failures} judge calls in a row"
            error = JudgeCircuitOpenError(f"stopped after {what} to {self.endpoint} failed; the last: {error.message}", error.step)
            circuit.opened_at = time.monotonic()
            circuit.proven = False
            circuit.failures = 0
        return error

"""A spend limit that holds before money is spent: every judge call reserves what it may cost
before it leaves, and settles what it did cost when it returns. No call leaves once the
reservations and the settled spend together would pass the limit, so a run can overshoot only
by what one call's estimate missed (its prompt counted short, or re-asks), never by the calls
of a whole concurrency window.

A call that does not fit while others are in flight waits for them to settle (they mostly
cost less than they held); one that does not fit with none in flight is refused with
`BudgetReached`, and the run stops there.

A call's reservation is what it may cost as far as the run has seen: its prompt at the
highest tokens-per-character ratio the provider has reported (two characters a token
before any), and an answer as long as the longest its step has given so far (its
`max_tokens` before any), at the model's price. Reserving the longest answer seen, rather
than the typical one, keeps what the calls in flight can miss by small. A call answered from the response cache costs nothing
(this middleware sits inside the cache); a call that fails after an answer came back (a
refused or cut-off answer, which the provider bills) settles at its reservation, one that got
no answer at nothing.

One `SpendLimit` is shared by every judge of a run: `for_model(model)` gives the middleware of
one model's judges. A run that stops on it is resumable: the next invocation starts from what
the run has spent so far (`spent_before`), so one budget covers the run across reruns.
"""

from __future__ import annotations

import asyncio
import threading

from ...errors import AnswerCutOffError, BudgetReached, InvalidAnswerError
from ..prices import Price, price_table
from ..protocol import CallNext, JudgeAnswer, JudgeRequest, TokenUsage

#: Tokens per character of a prompt before the provider has reported any (most text is
#: nearer 4 characters a token; 2 keeps the first reservations on the safe side).
FIRST_TOKENS_PER_CHARACTER = 0.5
#: The answer reserved for a call without max_tokens (every step of a catalog has one).
UNBOUNDED_ANSWER_TOKENS = 4096
#: How often a call that does not fit yet looks again while others settle (seconds).
_WAITING = 0.02


class SpendLimit:
    """A run's budget in US dollars: thread-safe, shared by every judge of the run."""

    def __init__(self, max_cost: float, spent_before: float = 0.0, named: str = "--max-cost") -> None:
        self.max_cost = max_cost
        #: How the user gave the budget, for the stop line (the pytest plugin's is an option of its own).
        self.named = named
        self.spent_before = spent_before
        self.spent = 0.0  # settled by this invocation's calls
        self.reserved = 0.0  # held by calls in flight
        self.refused = 0  # calls that did not leave
        self._tokens_per_character: dict[str, float] = {}  # by model
        self._answer_tokens: dict[tuple[str, str], int] = {}  # by model and step: the longest answer seen
        self._lock = threading.Lock()

    @property
    def total(self) -> float:
        """The run's spend so far: before this invocation, and settled in it."""
        return self.spent_before + self.spent

    def reached(self) -> bool:
        """Whether the run is out of budget: a call did not fit even with none in flight, or
        the spend has reached the limit."""
        with self._lock:
            return self.refused > 0 or self.spent_before + self.spent >= self.max_cost

    def stop_line(self) -> str:
        return f"the budget of ${self.max_cost:g} ({self.named}) was reached: the next judge call would have passed it (${self.total:.4f} spent)"

    def for_model(self, model: str) -> Spending:
        return Spending(self, model, price_table().price(model))

    async def reserve(self, model: str, price: Price, request: JudgeRequest) -> float:
        """Hold a call's worst cost: at once when it fits, after the calls in flight settle
        when it fits only without them, never when it does not fit at all (BudgetReached)."""
        characters = sum(len(str(message.get("content", ""))) for message in request.messages)
        longest = request.sampling.max_tokens or UNBOUNDED_ANSWER_TOKENS
        while True:
            with self._lock:
                ratio = self._tokens_per_character.get(model, FIRST_TOKENS_PER_CHARACTER)
                answer = min(self._answer_tokens.get((model, request.step), longest), longest)
                estimate = price.input * characters * ratio / 1e6 + price.output * answer / 1e6
                settled = self.spent_before + self.spent
                if settled + self.reserved + estimate <= self.max_cost:
                    self.reserved += estimate
                    return estimate
                if self.refused or settled + estimate > self.max_cost:
                    self.refused += 1
                    raise BudgetReached(self.stop_line())
            await asyncio.sleep(_WAITING)

    def settle(self, model: str, request: JudgeRequest, reserved: float, cost: float, usage: TokenUsage | None = None) -> None:
        characters = sum(len(str(message.get("content", ""))) for message in request.messages)
        with self._lock:
            self.reserved -= reserved
            self.spent += cost
            if usage is None:
                return
            if usage.prompt_tokens and characters:
                self._tokens_per_character[model] = max(self._tokens_per_character.get(model, 0.0), usage.prompt_tokens / characters)
            if usage.completion_tokens:
                key = (model, request.step)
                self._answer_tokens[key] = max(self._answer_tokens.get(key, 0), usage.completion_tokens)


class Spending:
    """The middleware of one model's judges under a `SpendLimit`."""

    def __init__(self, limit: SpendLimit, model: str, price: Price | None) -> None:
        self.limit = limit
        self.model = model
        self.price = price

    async def __call__(self, request: JudgeRequest, call_next: CallNext) -> JudgeAnswer:
        if self.price is None:  # refused before the run (max_cost needs a price for every model)
            return await call_next(request)
        reserved = await self.limit.reserve(self.model, self.price, request)
        try:
            answer = await call_next(request)
        except (InvalidAnswerError, AnswerCutOffError):
            self.limit.settle(self.model, request, reserved, reserved)  # an answer came back: billed
            raise
        except BaseException:
            self.limit.settle(self.model, request, reserved, 0.0)
            raise
        if answer.cached or answer.usage is None:
            cost = 0.0 if answer.cached else reserved  # a server that reports no usage: the worst case it was held for
            self.limit.settle(self.model, request, reserved, cost)
        else:
            self.limit.settle(self.model, request, reserved, self.price.cost(answer.usage, answer.batch), answer.usage)
        return answer


__all__ = ["SpendLimit", "Spending"]

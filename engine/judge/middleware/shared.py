"""Identical requests in flight at the same time are sent once: several scorers of one item
often ask the same question (hallucination and faithfulness extract an output's claims with
the same template, schema and bounds), and so does a batch run's second scorer while the
first one's call is still out. The first of them leads and asks; the others wait for its
answer and get it validated against their own answer model and rules, as a fresh one would
be (one that does not pass asks for itself). A response cache in front (cache.py) shares its
stored answers the same way, through the same `shared_flight`.

The key is everything that decides the answer (`cache_key`: the judge's model, endpoint and
mode, the messages, the answer's schema with its bounds, the sampling, the sample index);
requests are shared only within one event loop, and only while one is in flight.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from ..bounds import schema_of
from ..protocol import CallNext, JudgeAnswer, JudgeRequest

def _answer_schema(model: type[BaseModel] | None) -> Any:
    return None if model is None else schema_of(model)


def cache_key(identity: dict[str, Any], request: JudgeRequest) -> str:
    """The key of `request` to the judge described by `identity`: everything that decides
    its answer (the answer's JSON schema carries the request's bounds)."""
    decided_by = {
        "judge": identity,
        "messages": request.messages,
        "schema": _answer_schema(request.response_model),
        "sampling": request.sampling.model_dump(exclude={"reasks"}),
        "sample": request.sample,
    }
    return hashlib.sha256(json.dumps(decided_by, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


#: A stored or shared answer that the waiting request's own validation refused.
REFUSED = object()


def stored_form(value: Any) -> Any:
    """An answer as plain data, the form it is stored and shared in."""
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def revalidated(request: JudgeRequest, stored: Any) -> Any:
    """A stored or shared answer, validated as a fresh one would be (the rules of the step
    may read the run's earlier steps); `REFUSED` when it does not pass."""
    if request.response_model is None:
        return stored if isinstance(stored, str) else REFUSED
    try:
        return request.response_model.model_validate(stored)
    except ValidationError:
        return REFUSED


async def shared_flight(
    flights: dict[tuple[int, str], asyncio.Future[JudgeAnswer]],
    key: str,
    request: JudgeRequest,
    lead: Callable[[], Awaitable[JudgeAnswer]],
    shared: Callable[[], None] = lambda: None,
) -> JudgeAnswer:
    """The answer to `request`: the one an identical request already in flight (in
    `flights`, under `key`) gets, when it passes this request's validation (`shared()` is
    told), else asked by `lead()`, this request then leading the others until it is done."""
    loop = asyncio.get_running_loop()
    flight_key = (id(loop), key)
    leader = flights.get(flight_key)
    if leader is not None:
        try:
            answer = await asyncio.shield(leader)
        except asyncio.CancelledError:
            if not leader.cancelled():
                raise  # this caller was cancelled, not the one it waited for
        else:
            value = revalidated(request, stored_form(answer.value))
            if value is not REFUSED:
                shared()
                return JudgeAnswer(value=value, usage=None, cached=True, thinking=answer.thinking, probabilities=answer.probabilities)
    future: asyncio.Future[JudgeAnswer] = loop.create_future()
    flights[flight_key] = future
    try:
        answer = await lead()
    except BaseException as exc:
        if isinstance(exc, asyncio.CancelledError):
            future.cancel()
        else:
            future.set_exception(exc)
            future.exception()  # retrieved: waiters, if any, raise it themselves
        raise
    else:
        future.set_result(answer)
    finally:
        if flights.get(flight_key) is future:
            del flights[flight_key]
    return answer


# Every judge of the process shares one table: scorers are separate chains.
_flights: dict[tuple[int, str], asyncio.Future[JudgeAnswer]] = {}


class SharedRequests:
    """The middleware: requests to the judge described by `identity` (what decides its
    answers: model, endpoint, mode) that are identical and in flight at once are sent once."""

    def __init__(self, identity: dict[str, Any]) -> None:
        self.identity = identity

    async def __call__(self, request: JudgeRequest, call_next: CallNext) -> JudgeAnswer:
        return await shared_flight(_flights, cache_key(self.identity, request), request, lambda: call_next(request))

"""The circuit breaker in front of a judge, used directly as a long-lived host would (one
event loop, many calls): a refused key costs one request while it lasts, and is tried again
after the cool-down."""

from __future__ import annotations

import asyncio

from engine.testing import JudgeServer, Reply
from pydantic import BaseModel

from engine import JudgeAuthenticationError
from engine.judge import Chain, CircuitBreaker, JudgeConfig, JudgeRequest, OpenAIJudge, Sampling


class Claims(BaseModel):
    claims: list[str]


def test_a_refused_key_is_remembered_for_the_cooldown_then_probed_again(judge: JudgeServer) -> None:
    judge.on("Claims", Reply.fail(401, "bad key"))
    asking = Chain(OpenAIJudge(JudgeConfig(model="openai/test-model", http_retries=0)), [CircuitBreaker("test", cooldown=0.3)])
    request = JudgeRequest(messages=[{"role": "user", "content": "x"}], sampling=Sampling(max_tokens=10), step="s", response_model=Claims)

    async def ask_many() -> list[BaseException]:
        outcomes = await asyncio.gather(*(asking.ask(request) for _ in range(5)), return_exceptions=True)
        return [outcome for outcome in outcomes if isinstance(outcome, BaseException)]

    async def scenario() -> None:
        failures = await ask_many()
        assert len(failures) == 5 and all(isinstance(failure, JudgeAuthenticationError) and failure.fatal for failure in failures)
        assert len(judge.requests) == 1  # one request; the other four waited for it and learnt from it
        await asyncio.sleep(0.35)
        judge.on("Claims", {"claims": ["a"]})  # the key was fixed meanwhile
        answer = await asking.ask(request)
        assert answer.value.claims == ["a"]

    asyncio.run(scenario())
    assert len(judge.requests) == 2


def test_calls_after_the_first_success_go_at_once(judge: JudgeServer) -> None:
    judge.on("Claims", Reply(answer={"claims": ["a"]}, delay=0.2))
    asking = Chain(OpenAIJudge(JudgeConfig(model="openai/test-model")), [CircuitBreaker("test")])
    request = JudgeRequest(messages=[{"role": "user", "content": "x"}], sampling=Sampling(max_tokens=10), step="s", response_model=Claims)

    async def scenario() -> None:
        await asking.ask(request)
        await asyncio.gather(*(asking.ask(request) for _ in range(4)))

    asyncio.run(scenario())
    assert judge.max_in_flight == 4


"""Staying under the provider's limits: what the server sees when it asks the engine to wait,
and how evenly a configured rate is held. Times are read from the server's own log.

Each test uses a model name of its own: limiters are shared per model by the whole process."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from engine.testing import JudgeServer, Reply

from engine import JudgeConfig, JudgeRateLimitError, load_scorers
from engine.judge import JudgeRequest, Sampling, connect
from engine.judge.middleware.limiter import limiter_for, parse_duration, retry_delay
from engine.scoring import ScorerPlan


def fresh_model() -> str:
    return f"openai/limits-{uuid.uuid4().hex[:8]}"


def ask_many(config: JudgeConfig, count: int, warmed_on: JudgeServer | None = None) -> None:
    """`count` calls at once; with `warmed_on`, after one call that builds the event loop's
    HTTP client (which holds the loop while it loads certificates, so on a busy machine the
    calls due meanwhile would leave together), left out of that server's log."""
    judge = connect(config)

    async def ask_all() -> None:
        if warmed_on is not None:
            await judge.ask(JudgeRequest(messages=[{"role": "user", "content": "warm up"}], sampling=Sampling(), step="s"))
            warmed_on.requests.clear()
        await asyncio.gather(*(
            judge.ask(JudgeRequest(messages=[{"role": "user", "content": f"question {n}"}], sampling=Sampling(), step="s"))
            for n in range(count)
        ))

    asyncio.run(ask_all())


def test_retry_after_makes_every_call_to_the_model_wait(judge: JudgeServer) -> None:
    # The first answer is a 429 asking for 1.2 s. The SDK retries that call after 1.2 s, and
    # the limiter holds back the calls that were about to be sent meanwhile.
    judge.on(None, Reply.raw("fine"))
    config = JudgeConfig(model=fresh_model())
    judge_ = connect(config)

    async def scenario() -> None:
        await judge_.ask(JudgeRequest(messages=[{"role": "user", "content": "warm up"}], sampling=Sampling(), step="s"))
        judge.requests.clear()
        judge.on(None, [Reply.fail(429, "slow down", headers={"retry-after-ms": "1200"})])
        first = asyncio.create_task(judge_.ask(JudgeRequest(messages=[{"role": "user", "content": "one"}], sampling=Sampling(), step="s")))
        await asyncio.sleep(0.3)  # the 429 has arrived by now
        await asyncio.gather(first, *(
            judge_.ask(JudgeRequest(messages=[{"role": "user", "content": f"later {n}"}], sampling=Sampling(), step="s")) for n in range(3)
        ))

    asyncio.run(scenario())

    refused = judge.requests[0].received_at
    later = [request.received_at - refused for request in judge.requests[1:]]
    assert len(later) == 4  # the retry and the three others: nothing asked twice
    assert min(later) >= 1.1, later  # generous margins around 1.2 s
    assert max(later) < 3.0, later


def test_retry_after_in_seconds_is_honoured_by_the_one_retry(judge: JudgeServer) -> None:
    judge.on(None, [Reply.fail(429, "slow down", headers={"retry-after": "1"})])
    judge.on(None, Reply.raw("fine"))
    ask_many(JudgeConfig(model=fresh_model()), 1)
    assert len(judge.requests) == 2
    assert 0.9 <= judge.requests[1].received_at - judge.requests[0].received_at < 2.5


def test_an_exhausted_request_budget_pauses_before_any_429(judge: JudgeServer) -> None:
    judge.on(None, [Reply.raw("fine", headers={"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1s"})])
    judge.on(None, Reply.raw("fine"))
    config = JudgeConfig(model=fresh_model())
    ask_many(config, 1)
    ask_many(config, 1)  # a later call, in another event loop of the same process
    assert 0.85 <= judge.requests[1].received_at - judge.requests[0].received_at < 2.5


def test_a_lasting_429_is_retried_by_the_sdk_only_not_again_by_the_limiter(judge: JudgeServer) -> None:
    judge.on(None, Reply.fail(429, "quota exceeded", headers={"retry-after-ms": "10"}))
    with pytest.raises(JudgeRateLimitError, match="429"):
        ask_many(JudgeConfig(model=fresh_model(), http_retries=2), 1)
    assert len(judge.requests) == 3  # the first attempt and the SDK's two retries


def test_calls_in_flight_are_cut_on_429_and_grow_back_as_calls_succeed(judge: JudgeServer) -> None:
    model = fresh_model()
    judge.latency = 0.05
    judge.on(None, [Reply.fail(429, "busy", headers={"retry-after-ms": "200"})])
    judge.on(None, Reply.raw("fine"))
    config = JudgeConfig(model=model)
    ask_many(config, 16)
    limiter = limiter_for(judge.base_url, model)
    cut = limiter.stats().allowed_in_flight
    assert cut is not None and cut < 16
    judge.max_in_flight = 0
    ask_many(config, 40)
    # Asked all at once, 40 would be in flight together; the cut holds them to about `cut`,
    # growing by one for every `cut` successes ...
    assert judge.max_in_flight <= cut + 40 // cut + 1
    grown = limiter.stats().allowed_in_flight
    assert grown is None or grown > cut  # ... so it is higher again after them


@pytest.mark.slow
def test_a_configured_request_rate_holds_within_ten_percent(judge: JudgeServer) -> None:
    judge.on(None, Reply.raw("fine"))
    ask_many(JudgeConfig(model=fresh_model(), rpm=600), 41, warmed_on=judge)  # 10 a second, asked all at once
    times = sorted(request.received_at for request in judge.requests)
    rate = (len(times) - 1) / (times[-1] - times[0])
    assert 9.0 <= rate <= 11.0, rate


@pytest.mark.slow
def test_a_configured_token_rate_holds_within_ten_percent(judge: JudgeServer) -> None:
    judge.on(None, Reply.raw("fine", usage=(90, 10)))  # 100 tokens a call, as the server reports
    ask_many(JudgeConfig(model=fresh_model(), tpm=60_000), 31)  # 1,000 tokens a second: 10 calls
    times = sorted(request.received_at for request in judge.requests)
    rate = (len(times) - 1) / (times[-1] - times[0])
    assert 9.0 <= rate <= 11.0, rate


@pytest.mark.slow
def test_a_token_rate_learned_from_a_shorter_question_holds_for_the_burst_after_it(judge: JudgeServer) -> None:
    # The first call ("warm up", 7 characters) teaches the limiter how the judge counts
    # tokens; the 31 asked together after it are longer. Every call uses 100 tokens.
    judge.on(None, Reply.raw("fine", usage=(90, 10)))
    ask_many(JudgeConfig(model=fresh_model(), tpm=60_000), 31, warmed_on=judge)  # 1,000 tokens a second: 10 calls
    times = sorted(request.received_at for request in judge.requests)
    rate = (len(times) - 1) / (times[-1] - times[0])
    assert 9.0 <= rate <= 11.0, rate


@pytest.mark.slow
def test_under_both_rates_no_two_calls_leave_closer_than_the_request_rate_allows(judge: JudgeServer) -> None:
    # 4 calls a second by rpm, 10 by tpm (100 tokens a call). The first question is far shorter
    # than the others, so they are charged too much at first and their turns move earlier as
    # the usage settles: the request rate must still hold between every two calls.
    judge.latency = 0.3
    judge.on(None, Reply.raw("fine", usage=(90, 10)))
    config = JudgeConfig(model=fresh_model(), rpm=240, tpm=60_000)
    judge_ = connect(config)

    async def scenario() -> None:
        await judge_.ask(JudgeRequest(messages=[{"role": "user", "content": "hi"}], sampling=Sampling(), step="s"))
        judge.requests.clear()
        await asyncio.gather(*(
            judge_.ask(JudgeRequest(messages=[{"role": "user", "content": f"question number {n}"}], sampling=Sampling(), step="s")) for n in range(12)
        ))

    asyncio.run(scenario())
    times = sorted(request.received_at for request in judge.requests)
    gaps = [later - earlier for earlier, later in zip(times, times[1:])]
    assert min(gaps) >= 0.17, [round(gap, 3) for gap in gaps]  # 0.25 s apart, less a busy scheduler's lateness
    assert (len(times) - 1) / (times[-1] - times[0]) <= 4.4


def test_a_judge_that_reports_no_usage_still_gets_many_calls_in_flight_under_a_token_rate(judge: JudgeServer) -> None:
    # Some OpenAI-compatible servers leave `usage` out. The first call still goes alone, but
    # after it the calls are paced by their estimates, not sent one at a time.
    judge.latency = 0.3
    judge.on(None, Reply.raw("fine", usage=None))
    ask_many(JudgeConfig(model=fresh_model(), tpm=6_000_000), 8)
    assert len(judge.requests) == 8
    assert judge.max_in_flight >= 4, judge.max_in_flight


def test_rate_limit_headers_are_read_as_providers_write_them() -> None:
    assert parse_duration("6m0s") == 360 and parse_duration("20ms") == 0.02 and parse_duration("1.5s") == 1.5
    assert parse_duration("soon") is None
    assert retry_delay({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_delay({"retry-after": "2"}) == 2
    assert retry_delay({"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "3s"}) == 3
    assert retry_delay({}) is None


def test_rates_can_be_set_in_the_scorer_yaml_without_changing_the_definition(tmp_path: Path) -> None:
    def plan_of(judge_block: str) -> ScorerPlan:
        path = tmp_path / "catalog.yaml"
        path.write_text(f"scorers:\n  paced:\n    extends: hallucination\n    judge:\n{judge_block}", encoding="utf-8")
        return load_scorers(path).plan("paced")

    paced = plan_of("      rpm: 120\n      tpm: 50000\n")
    unpaced = plan_of("      temperature: 0\n")
    assert (paced.judge_defaults.rpm, paced.judge_defaults.tpm) == (120, 50000)
    # How fast is not what is judged: a run resumes across a change of rates.
    assert paced.fingerprint == unpaced.fingerprint


def test_the_progress_display_says_when_a_model_is_throttled(judge: JudgeServer) -> None:
    from engine.cli.eval_commands import ThrottleColumn

    model = fresh_model()
    limiter = limiter_for(judge.base_url, model)
    column = ThrottleColumn()
    assert model not in column.render(None).plain  # type: ignore[arg-type]  # it reads the limiters, not the task

    limiter.observe(429, {"retry-after": "30"})  # what the client reports of a 429 it received

    shown = column.render(None).plain  # type: ignore[arg-type]
    assert f"{model}: rate limited, waiting 3" in shown  # 30 s, or 29 s by the time it renders

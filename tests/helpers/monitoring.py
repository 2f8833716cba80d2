"""Live hosts whose judge drifts, and monitors files as users write them: what the tests of
monitors over a store (SQLite or PostgreSQL) share."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import yaml
from helpers.scripted import numbered_claims

from engine import LiveScorer, create_hallucination_scorer
from engine.testing import JudgeServer


def script_drifting_judge(judge: JudgeServer, drift: threading.Event) -> None:
    """Claims are the output's sentences; every claim is supported until `drift` is set,
    then every claim is called a hallucination (the judge's answers drift, not the replies)."""
    judge.on("Claims", lambda request: {"claims": ["the reply is fine"]})
    judge.on(
        "HallucinationVerdicts",
        lambda request: {
            "verdicts": [
                {"statement": claim, "verdict": "yes" if drift.is_set() else "no", "reason": "scripted"} for claim in numbered_claims(request.prompt)
            ]
        },
    )
    judge.on("Reason", {"reason": "scripted reason"})


def replies(live: LiveScorer, count: int, start: int) -> None:
    for n in range(start, start + count):
        live.submit(f"reply {n}", input=f"question {n}", run_id=f"trace-{n}")
    assert live.flush(timeout=30)


def drifted_fleet(judge: JudgeServer, store: str | Path, hosts: int, replies_each: int) -> threading.Event:
    """`hosts` live hosts (runs host-0, host-1, ...) write `replies_each` replies each to
    `store` while the judge has drifted; clear the event returned to end the drift."""
    drift = threading.Event()
    drift.set()
    script_drifting_judge(judge, drift)
    for host in range(hosts):
        live = LiveScorer(create_hallucination_scorer(options={"context": ["facts"]}), store=store, run=f"host-{host}")
        replies(live, replies_each, host * replies_each)
        live.close()
    return drift


def rising_monitor_file(path: Path, webhook: str, statistic: str = "mean", window: int | str = 10, **more: Any) -> Path:
    """A monitors file as a user writes it: alert when the hallucination `statistic` over
    `window` rises above 0.5. `more`: `min_samples`, and `backoff` for the webhook."""
    backoff = {"backoff": more.pop("backoff")} if "backoff" in more else {}
    monitor = {"scorer": "hallucination", "statistic": statistic, "above": 0.5, "window": window, **more, "alert": [{"webhook": webhook, **backoff}]}
    path.write_text(yaml.safe_dump({"monitors": {"rising": monitor}}, sort_keys=False), encoding="utf-8")
    return path

"""Scoring a Ray Dataset on a local Ray instance against the loopback judge: every row
scored once by actors running the engine's scorers, results in the rows and in the store."""

from __future__ import annotations

from engine.judge import JudgeSettings
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.scripted import outputs_judged, script_hallucination

from engine import SQLiteStore
from engine.errors import ConfigError
from engine.testing import JudgeServer

ray = pytest.importorskip("ray", reason="ray is not installed (pip install '.[ray]')")
pytest.importorskip("ray.data", reason="Ray Data is not installed (pip install '.[ray]')")

from engine.ray import score_dataset  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    # Small on purpose: the machine has two cores shared with others.
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


@pytest.mark.slow
def test_a_dataset_is_scored_by_actors_into_rows_and_the_store(local_ray: None, judge: JudgeServer, tmp_path: Path) -> None:
    script_hallucination(judge)
    rows = [{"id": f"i{n}", "input": f"q{n}", "output": f"ok {n}. WRONG" if n % 2 else f"ok {n}", "context": ["facts"]} for n in range(8)]
    rows.append({"id": "bad", "input": "q", "output": "FAIL", "context": ["facts"]})
    store = tmp_path / "ray.sqlite"
    cache = tmp_path / "cache.sqlite"  # one file the actors share (a postgresql:// URL on a cluster)

    scored = score_dataset(ray.data.from_items(rows), ["hallucination"], store=store, run="ray", actors=2, concurrency=4, batch_size=3, cache=cache, judge=JudgeSettings(base_url=judge.base_url, api_key="sk-test"))
    out = {row["id"]: row for row in scored.take_all()}

    assert set(out) == {f"i{n}" for n in range(8)} | {"bad"}
    assert [out[f"i{n}"]["hallucination_score"] for n in range(4)] == [0.0, 0.5, 0.0, 0.5]
    assert out["i1"]["hallucination_reason"] == "scripted reason" and out["i1"]["input"] == "q1"
    assert out["bad"]["hallucination_score"] is None and "scripted judge failure" in out["bad"]["hallucination_error"]
    assert sorted(outputs_judged(judge)) == sorted(str(row["output"]) for row in rows)  # each row judged once
    with SQLiteStore(store) as saved:
        assert len(saved.query(run="ray")) == 9 and len(saved.query(run="ray", errors=True)) == 1

    judge.requests.clear()
    again = score_dataset(ray.data.from_items(rows), ["hallucination"], run="ray-again", cache=cache, actors=2, batch_size=3, judge=JudgeSettings(base_url=judge.base_url, api_key="sk-test"))
    assert {row["id"]: row["hallucination_score"] for row in again.take_all()} == {key: row["hallucination_score"] for key, row in out.items()}
    assert outputs_judged(judge) == ["FAIL"]  # the cache answered every other question; a failure is never kept


def test_a_wrong_scorer_fails_before_any_actor_starts(judge: JudgeServer) -> None:
    with pytest.raises(ConfigError, match="nope"):
        score_dataset(ray.data.from_items([{"output": "x"}]), ["nope"], judge=JudgeSettings(base_url=judge.base_url))

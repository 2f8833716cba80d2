"""What the traces tests share: the recorded spans of each convention (fixtures/traces, one
OTLP JSON export a line, as the Collector's file exporter writes them), a catalog with a
`traces:` section, a collector over the live scorer and a store in a test's folder, and the
scores it stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import LiveScorer, SQLiteStore, load_scorers
from engine.runs.traces import TraceCollector

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "traces"
#: What the scripted server answers the instrumented apps' question with.
ANSWER = "The Eiffel Tower is in Paris and was finished in 1889."


def traces_catalog(tmp_path: Path, convention: str, extra: str = "") -> Path:
    """A catalog whose LLM spans go to hallucination and whole runs to used-no-tools."""
    path = tmp_path / "catalog.yaml"
    path.write_text(
        "scorers: {}\n"
        "traces:\n"
        f"  convention: {convention}\n"
        "  llm:\n    scorers: [hallucination]\n"
        "  agent:\n    scorers: [used-no-tools]\n" + extra,
        encoding="utf-8",
    )
    return path


def collector_for(catalog: Path, tmp_path: Path, live: dict[str, Any] | None = None, **options: Any) -> TraceCollector:
    """A collector of the catalog's `traces:` section (its monitors watching), storing run
    `traces` in tmp_path/scores.sqlite; `live`: more options of the live scorer."""
    source = load_scorers(catalog)
    assert source.traces is not None
    scorer = LiveScorer([source.create(scorer_id) for scorer_id in source.traces.scorer_ids()], sampling=source.traces.sampling,
                        store=tmp_path / "scores.sqlite", run="traces", flush_at_exit=0, monitors=source.monitors or None, **(live or {}))
    return TraceCollector(source.traces, scorer, tmp_path / "spool.sqlite", **{"settle": 0.2, **options})


def stored(tmp_path: Path) -> list[Any]:
    """The records of run `traces` in tmp_path/scores.sqlite."""
    with SQLiteStore(tmp_path / "scores.sqlite") as store:
        return store.query(run="traces")

"""`scorers collect`: an OTLP/HTTP receiver the app's OpenTelemetry exporter sends its traces
to; the spans the catalog's `traces:` section maps are scored in the background as live
replies are, into the results store (engine/runs/traces)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..catalog import load_scorers
from ..errors import ConfigError
from ..runs.live.scorer import LiveScorer
from ..runs.traces.collector import TraceCollector
from ..runs.traces.receiver import LOOPBACK, TraceReceiver, check_exposure
from ..scrub import install_log_filter
from ..store import redact_url
from .app import app, errors
from .common import DEFAULT_STORE, StoreOption, one_line_errors, sigterm_as_interrupt
from .options import ScorerSetup, flags


@app.command("collect")
@one_line_errors
@flags(ScorerSetup)
def collect_command(
    setup: ScorerSetup,
    catalog: Annotated[Path, typer.Argument(help="Your catalog folder (or its YAML file), with a `traces:` section")] = Path("."),
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port of the OTLP/HTTP receiver (0: a free one)")] = 4318,
    host: Annotated[str, typer.Option("--host", help="Address to listen on; other than 127.0.0.1, a --token is needed")] = LOOPBACK,
    token: Annotated[Optional[str], typer.Option("--token", envvar="SCORERS_COLLECT_TOKEN", help="Exporters send it as Authorization: Bearer TOKEN")] = None,
    store: StoreOption = DEFAULT_STORE,
    run: Annotated[str, typer.Option("--run", help="The live run the scores are stored under")] = "traces",
    spool: Annotated[Optional[Path], typer.Option("--spool", help="Where accepted spans wait to be scored (default: beside the store, traces-spool.sqlite)")] = None,
    max_cost: Annotated[Optional[float], typer.Option("--max-cost", min=0.000001, help="Judge calls past this many US dollars fail instead of being sent")] = None,
    settle: Annotated[float, typer.Option("--settle", min=0, help="Seconds a trace's root waits for late spans before it is scored")] = 1.0,
    max_pending: Annotated[int, typer.Option("--max-pending", min=1, help="Spans waiting, at most, before new traces are shed (by trace id)")] = 100_000,
) -> None:
    """Receive the OpenTelemetry traces your app exports (OTLP/HTTP, POST /v1/traces) and score
    their spans in the background, as the catalog's `traces:` section says."""
    check_exposure(host, token)  # before anything is opened
    source = load_scorers(catalog)
    spec = source.traces
    if spec is None:
        raise ConfigError("the catalog has no `traces:` section: say which spans are scored, and by which scorers (docs/traces.md)", source.path)
    if "://" in store and spool is None:
        raise ConfigError("a database store keeps no spool beside it: give --spool FILE", parameter="--spool")
    scorers = [setup.create(source, scorer_id) for scorer_id in spec.scorer_ids()]
    if "://" not in store:
        Path(store).parent.mkdir(parents=True, exist_ok=True)
    live = LiveScorer(scorers, sampling=spec.sampling, store=store, run=run, flush_at_exit=0, monitors=source.monitors or None, max_cost=max_cost)
    collector = TraceCollector(spec, live, spool or Path(store).with_name("traces-spool.sqlite"), settle=settle, max_pending=max_pending)
    receiver = TraceReceiver(collector, host=host, port=port, token=token)
    install_log_filter()  # an API key never reaches the log
    logging.getLogger("engine.traces").addHandler(_ToStderr())
    logging.getLogger("engine.live").addHandler(_ToStderr())
    say(f"Receiving traces at {receiver.endpoint} (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); scores go to {redact_url(store)}, run {run!r}.")
    if collector.stats.spans:
        say(f"{collector.stats.spans} spans accepted before the last stop are scored first.")
    say("Ctrl-C stops it: complete traces are scored first, the rest is kept for the next start.")
    try:
        with sigterm_as_interrupt():
            receiver.run()
    except KeyboardInterrupt:
        pass
    flushed = receiver.stop()
    stats = collector.stats
    say(f"Stopped: {stats.spans} spans, {stats.traces} traces, {stats.items} items scored, {stats.notes} spans that did not fit, {stats.shed} spans shed"
        + ("" if flushed else "; some scores were not finished (their spans are kept for the next start)"))


def say(line: str) -> None:
    errors.print(line, markup=False, highlight=False, soft_wrap=True)


class _ToStderr(logging.Handler):
    """The receiver's warnings (shed load, spans that did not fit) on stderr, one line each."""

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            errors.print(f"warning: {record.getMessage()}", markup=False, highlight=False, soft_wrap=True)

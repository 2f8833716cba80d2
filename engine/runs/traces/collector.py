"""Traces scored as live replies are: spans accepted by the receiver (or read from a file) are
kept in the spool, gathered by trace, turned into items by the catalog's `traces:` section and
handed to the one live scorer (engine/runs/live), whose sampling (by trace id), filter, budget,
monitors and store apply as they do to a host's replies.

A trace is scored once its root span has come and nothing more of it for `settle` seconds, or
`trace_timeout` seconds after its first span (a root lost on the way). Load is shed by the live
scorer's own rule: when more than `max_pending` spans wait, a new trace is taken only if its
sample point (the hash of its trace id) falls under max_pending / waiting, so the traces kept
are the same ones a lower sampling rate would keep; `stats.shed` counts the spans turned away,
the log says so, and the exporter is told in OTLP's partial success.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

from ...catalog.traces import TracesSpec
from ...formatting import one_line
from ...store import ResultRecord
from ..live.sampling import sample_point
from ..live.scorer import LiveScorer
from .export import ScoreExporter
from .mapping import Note, TraceItem, TraceReader, group_by_trace
from .otlp import Span
from .spool import Spool

logger = logging.getLogger("engine.traces")


class TraceStats(BaseModel):
    """Counters since the collector started."""

    spans: int = Field(default=0, description="Spans accepted (kept in the spool)")
    shed: int = Field(default=0, description="Spans turned away because too many were waiting")
    traces: int = Field(default=0, description="Traces turned into items")
    items: int = Field(default=0, description="Items handed to the live scorer")
    notes: int = Field(default=0, description="Spans that gave no item (see `notes`)")
    already_scored: int = Field(default=0, description="Items found in the store already (traces kept over a restart)")


@dataclass
class _Waiting:
    spans: list[Span] = field(default_factory=list)
    first: float = field(default_factory=time.monotonic)
    last: float = field(default_factory=time.monotonic)
    rooted: bool = False
    recovered: bool = False  # kept over a restart: some of its items may be scored already


class TraceCollector:
    """Spans in, scores out through `live`; see the module docstring."""

    def __init__(
        self,
        spec: TracesSpec,
        live: LiveScorer,
        spool: str | Path,
        *,
        settle: float = 1.0,
        trace_timeout: float = 30.0,
        max_pending: int = 100_000,
        export_headers: dict[str, str] | None = None,
    ) -> None:
        self.spec = spec
        self.live = live
        self.reader = TraceReader(spec)
        self.spool = Spool(spool)
        self.settle = settle
        self.trace_timeout = trace_timeout
        self.max_pending = max_pending
        self.stats = TraceStats()
        self.notes: deque[Note] = deque(maxlen=1000)
        self.exporter = ScoreExporter(spec.export, export_headers) if spec.export else None
        self._waiting: dict[str, _Waiting] = {}
        self._pending_spans = 0
        #: Per trace handed to the live scorer: the scores still to come before its spans leave the spool.
        self._outstanding: dict[str, int] = {}
        self._lock = threading.Lock()
        #: One hand-over at a time: the gathering thread's, or a flush's or close's.
        self._handing = threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        previous = live.on_result
        self._previous_on_result = previous
        live.on_result = self._scored
        for spans in self.spool.pending().values():  # what a previous run accepted and did not finish
            self._hold(spans, recovered=True)

    # taking spans --------------------------------------------------------------------------

    def accept(self, spans: Sequence[Span]) -> int:
        """Keep what of `spans` the load allows (in the spool first); the number shed."""
        kept: list[Span] = []
        shed = 0
        with self._lock:
            waiting = self._pending_spans
            for trace_id, trace in group_by_trace(spans).items():
                known = trace_id in self._waiting or trace_id in self._outstanding
                if known or waiting < self.max_pending or sample_point(trace_id, self.live.seed) < self.max_pending / max(waiting, 1):
                    kept.extend(trace)
                    waiting += len(trace)
                else:
                    shed += len(trace)
            if shed:
                self.stats.shed += shed
        if shed and (self.stats.shed == shed or self.stats.shed // 10_000 != (self.stats.shed - shed) // 10_000):
            logger.warning("trace scoring is behind: %d spans waiting; %d spans shed so far (traces sampled by trace id)", waiting, self.stats.shed)
        if kept:
            self.spool.add(kept)  # before the exporter is answered: accepted means kept
            self._hold(kept)
        return shed

    def _hold(self, spans: Sequence[Span], recovered: bool = False) -> None:
        now = time.monotonic()
        with self._lock:
            self.stats.spans += len(spans)
            self._pending_spans += len(spans)
            for span in spans:
                waiting = self._waiting.setdefault(span.trace_id, _Waiting(first=now))
                waiting.recovered = waiting.recovered or recovered
                waiting.spans.append(span)
                waiting.last = now
                waiting.rooted = waiting.rooted or span.parent_id is None
        self._wake.set()

    def waiting(self) -> list[str]:
        """The trace ids accepted and not handed to the live scorer yet."""
        with self._lock:
            return list(self._waiting)

    # scoring -------------------------------------------------------------------------------

    def start(self) -> TraceCollector:
        self._thread = threading.Thread(target=self._gather, name="scorers-traces", daemon=True)
        self._thread.start()
        return self

    def _gather(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(min(0.2, self.settle))
            self._wake.clear()
            try:
                self.score_ready()
            except Exception:  # a bug of ours: logged, the receiver keeps taking spans
                logger.exception("trace scoring failed")

    def score_ready(self, everything: bool = False) -> None:
        """Hand the traces that are complete (all of them with `everything`) to the live scorer."""
        with self._handing:
            now = time.monotonic()
            with self._lock:
                ready = [
                    trace_id for trace_id, waiting in self._waiting.items()
                    if everything or (waiting.rooted and now - waiting.last >= self.settle) or now - waiting.first >= self.trace_timeout
                ]
            for trace_id in ready:
                if not self._has_room() or (self._stop.is_set() and threading.current_thread() is self._thread):
                    break  # left waiting (and in the spool) until the live scorer catches up, or for close()
                with self._lock:
                    waiting = self._waiting.pop(trace_id)
                    self._pending_spans -= len(waiting.spans)
                self._score_trace(trace_id, waiting.spans, waiting.recovered)

    def _has_room(self) -> bool:
        return self.live.stats.pending < self.live.queue_size - len(self.live.scorers)

    def _score_trace(self, trace_id: str, spans: list[Span], recovered: bool) -> None:
        mapped = self.reader.items(spans)
        self.stats.traces += 1
        for note in mapped.notes:
            self.stats.notes += 1
            self.notes.append(note)
            logger.warning("not scored: %s", note)
        expected = 0
        for item in mapped.items:
            expected += self._submit(item, recovered)
        with self._lock:
            if expected:
                self._outstanding[trace_id] = self._outstanding.get(trace_id, 0) + expected
        if not expected:
            self.spool.remove(trace_id)

    def _submit(self, item: TraceItem, recovered: bool) -> int:
        """Hand one item to the live scorer; the number of scores it will give. An item kept
        over a restart is not scored again by the scorers that scored it before."""
        given = item.given
        store = self.live.store
        scorers = list(item.scorers)
        if recovered and store is not None and given.run_id is not None:
            done = {record.scorer_id for record in store.item_records(self.live.run, given.run_id)}
            scorers = [scorer for scorer in scorers if scorer not in done]
            if not scorers:
                self.stats.already_scored += 1
                return 0
        point = sample_point(item.trace_id, self.live.seed)
        sampled = [scorer for scorer in scorers if point < self.live.rates.get(scorer, 0.0)]
        if not sampled:
            return 0
        queued = self.live.submit(
            given.output, given.input, context=list(given.context) if given.context is not None else None, metadata=given.metadata, run_id=given.run_id,
            sample_key=item.trace_id, scorers=scorers,
        )
        self.stats.items += 1
        return len(sampled) if queued else 0

    async def _scored(self, record: ResultRecord) -> None:
        """Each score: sent on (the exporter, the host's callback); once a trace's scores are
        all in, its spans leave the spool."""
        if self.exporter is not None:
            try:
                self.exporter.export(record)
            except Exception as exc:
                logger.warning("could not send the score of %s back as a span: %s", record.scorer_id, one_line(exc))
        trace_id = record.metadata.get("trace_id")
        done = False
        with self._lock:
            if isinstance(trace_id, str) and trace_id in self._outstanding:
                self._outstanding[trace_id] -= 1
                if self._outstanding[trace_id] <= 0:
                    del self._outstanding[trace_id]
                    done = True
        if done:
            assert isinstance(trace_id, str)
            self.spool.remove(trace_id)
        if self._previous_on_result is not None:
            returned = self._previous_on_result(record)
            if returned is not None:
                await returned

    # stopping ------------------------------------------------------------------------------

    def flush(self, timeout: float | None = None) -> bool:
        """Score every trace waiting, complete or not, and wait for the scores."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            self.score_ready(everything=True)
            with self._lock:
                left = bool(self._waiting)
            if not left:
                break
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return self.live.flush(None if deadline is None else max(0.0, deadline - time.monotonic()))

    def close(self, timeout: float | None = 10.0) -> bool:
        """Stop gathering, score what is complete (what is not stays in the spool for the next
        start), close the live scorer and the exporter."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.score_ready()
        flushed = self.live.close(timeout)
        if self.exporter is not None:
            self.exporter.close()
        self.spool.close()
        return flushed

"""Live scoring: scorers attached to an agent score its replies in the background.

    live = LiveScorer([create_hallucination_scorer()], sampling={"hallucination": 0.1},
                      store="scores.sqlite")

    @live                       # or: agent = attach_scorers(agent, [scorer], sampling=0.1)
    def agent(question: str) -> list[dict]: ...

    agent("...")                # returns at once; a sampled share of replies gets scored
    live.flush(); live.close()  # at shutdown (also done, with a time limit, at exit)

The reply goes back to the caller untouched and immediately. Scoring happens on a
background thread with its own event loop, so it works the same under sync and async hosts
and never competes with the host's loop. Jobs wait in a bounded queue: when it is full the
reply is not scored and `stats.dropped` counts it; the caller never waits. A failing scorer
or judge is logged (logger `engine.live`) and recorded (store, `errors`, `stats`), never
raised into the host.

Where results go: the store (when given), `on_result(record)` (when given), and always the
`results` deque of recent records and the `stats` counters, so scoring is never silently
lost for want of storage.

The context of a reply comes from `get_context(run, step)` when given (the same signature
as a scorer's own: `run.input` and `run.output` are the reply's), else from the tool results
in the reply's messages (for scorers without context of their own).
"""

from __future__ import annotations

import asyncio
import atexit
import inspect
import logging
import os
import threading
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Coroutine, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ...errors import ConfigError, JudgeCircuitOpenError, NotScorable, ScorerError
from ...formatting import one_line
from ...judge.middleware.budget import SpendLimit
from ...scoring import AnyScorer, GetContext, RunInput, ScoreResult
from ...scoring.assembly import within_budget
from ...scoring.tracing import current_trace, within
from ...scoring.transcripts import tool_result_context
from ...store import KeepsAlerts, ResultRecord, Store, open_store
from ..batch import check_scorers
from ..identity import aclaim_run, check_claim
from .content import ContentPolicy, kept_content
from .agents import attached
from .sampling import LiveStats, sample_point, sampling_rates
from ..monitors import Alert, Monitor, MonitorHub, as_monitors
from ..records import result_record
from ..targets import as_reply

logger = logging.getLogger("engine.live")

ResultCallback = Callable[[ResultRecord], None | Awaitable[None]]
#: A predicate over a run's metadata: only runs for which it is true are sampled.
RunFilter = Callable[[Mapping[str, Any]], bool]

_INPUT_KEYWORDS = ("input", "messages", "prompt", "question", "query")
#: How long a reply waits, at most, for a judge whose circuit is open to be probed again.
CIRCUIT_WAIT = 120.0
#: How often, at most, alerts no receiver has taken yet are sent again (as replies are scored).
RETRY_ALERTS_EVERY = 10.0


@dataclass
class _Job:
    given: RunInput  # its run_id is always set: the sampling is computed from it
    scorers: list[AnyScorer]
    trace: Any = None  # the agent's trace context, continued by the scorer runs


class LiveScorer:
    """Scores agent replies in the background; see the module docstring.

    `sampling` is one rate for every scorer or a rate per scorer id (missing ids: 1.0).
    Sampling is decided by the run id (`sample_point`): the same runs are picked by every
    scorer at one rate, and again when the runs are replayed; `seed` picks another set.
    `filter(metadata) -> bool` is checked first: runs it turns away are not sampled (a filter
    that raises turns the run away too, and is logged).
    `queue_size` bounds the replies waiting or being scored; `concurrency` how many are
    scored at once. `monitors` (Monitor objects or a YAML file) watch the outcomes and send
    alerts from the background thread. `store_content` says what of each reply the store
    keeps for re-scoring (True, False, or a ContentPolicy: fields, size limit, retention);
    secrets are masked either way. `keep` is the length of the
    `results` and `errors` deques. `flush_at_exit` is how long the interpreter's exit waits
    for pending scores (0: not at all).
    """

    def __init__(
        self,
        scorers: Sequence[AnyScorer] | AnyScorer,
        *,
        sampling: float | Mapping[str, float] = 1.0,
        store: Store | str | Path | None = None,
        run: str = "live",
        get_context: GetContext | None = None,
        on_result: ResultCallback | None = None,
        filter: RunFilter | None = None,  # noqa: A002 - the word users look for
        queue_size: int = 1000,
        concurrency: int = 4,
        seed: int | None = None,
        keep: int = 1000,
        flush_at_exit: float = 5.0,
        monitors: Sequence[Monitor] | Monitor | str | Path | None = None,
        store_content: ContentPolicy | bool | Mapping[str, Any] = True,
        max_cost: float | None = None,
    ) -> None:
        #: What the judges may spend in all (US dollars): a call past it fails, and is recorded so.
        self.spend_limit = SpendLimit(max_cost) if max_cost is not None else None
        self.scorers = [within_budget(scorer, self.spend_limit) for scorer in check_scorers(scorers)]
        self.rates = sampling_rates(sampling, self.scorers)
        if queue_size < 1 or concurrency < 1:
            raise ConfigError("queue_size and concurrency must be at least 1")
        if get_context is not None and not callable(get_context):
            raise ConfigError("get_context must be a callable (run, step) -> list[str]")
        if filter is not None and not callable(filter):
            raise ConfigError("filter must be a callable (metadata) -> bool")
        self.filter = filter
        self.seed = seed
        self.store = open_store(store)
        self._owns_store = self.store is not None and self.store is not store
        if self.store is not None:
            try:  # a batch (or other) run of that name is never written into: refused here, before any reply
                check_claim(self.store, run, "live")
            except BaseException:
                if self._owns_store:
                    self.store.close()
                raise
        #: Why the store refused this run's name after all (another kind of run took it since).
        self._store_refused: str | None = None
        self.run = run
        self.get_context = get_context
        self.on_result = on_result
        self.queue_size = queue_size
        self.concurrency = concurrency
        self.flush_at_exit = flush_at_exit
        self.content = ContentPolicy.of(store_content)
        self.monitors = MonitorHub(as_monitors(monitors), self.store, {scorer.id for scorer in self.scorers}, run)
        self._sending = 0  # alerts being delivered: flush waits for them too
        self._retried_at = time.monotonic()  # when alerts not taken yet were last sent again
        self._expired_at: float | None = None  # when content was last expired (monotonic)
        self.stats = LiveStats(
            sampled={scorer.id: 0 for scorer in self.scorers},
            scored={scorer.id: 0 for scorer in self.scorers},
            errors={scorer.id: 0 for scorer in self.scorers},
        )
        self.results: deque[ResultRecord] = deque(maxlen=keep)
        self.errors: deque[ResultRecord] = deque(maxlen=keep)
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._slots: asyncio.Semaphore | None = None
        self._pid = os.getpid()
        self._closed = False
        self._run_started = False
        if flush_at_exit > 0:
            atexit.register(self._at_exit)

    def __repr__(self) -> str:
        return f"LiveScorer({[scorer.id for scorer in self.scorers]}, run={self.run!r})"

    # attaching -------------------------------------------------------------------------

    def __call__(self, agent: Any) -> Any:
        """Decorator form of `wrap`."""
        return self.wrap(agent)

    def wrap(self, agent: Any) -> Any:
        """The agent with scoring attached: a function (sync or async) keeps its kind; an
        object with `generate`/`agenerate` gets those wrapped, the rest passed through.
        The wrapper's `.live` is this LiveScorer."""
        return attached(agent, self._observe, self)

    def _observe(self, args: tuple[Any, ...], kwargs: Mapping[str, Any], reply: Any) -> None:
        try:
            value = args[0] if args else next((kwargs[name] for name in _INPUT_KEYWORDS if name in kwargs), None)
            self.submit(as_reply(reply), input=value)
        except Exception as exc:  # whatever goes wrong here is ours, never the host's
            logger.warning("live scoring could not take a reply: %s", one_line(exc))

    # scoring -----------------------------------------------------------------------------

    def submit(
        self,
        output: Any,
        input: Any = None,
        *,
        context: list[str] | None = None,
        ground_truth: Any = None,
        metadata: Mapping[str, Any] | None = None,
        run_id: str | None = None,
        turns: list[Any] | None = None,
        expected_trajectory: list[Any] | None = None,
        sample_key: str | None = None,
        scorers: Collection[str] | None = None,
    ) -> bool:
        """Queue one reply for the scorers sampled for it; never blocks. True when queued.
        Give `run_id` (e.g. the trace id) to make the sampling replayable; `sample_key`, when
        the sampling is decided by something else than the run id (the items of one trace share
        its trace id); `scorers`, the ids of the attached scorers this reply is for (default: all)."""
        run_id = run_id or str(uuid.uuid4())
        metadata = dict(metadata or {})
        admitted = self._admits(metadata)
        point = sample_point(sample_key or run_id, self.seed)
        with self._lock:
            self.stats.calls += 1
            if not admitted:
                self.stats.filtered += 1
                return False
            chosen = [scorer for scorer in self.scorers if point < self.rates[scorer.id] and (scorers is None or scorer.id in scorers)]
            full = bool(chosen) and (self._closed or self.stats.pending >= self.queue_size)
            if full:
                self.stats.dropped += 1
                if self.stats.dropped in (1, 10, 100, 1000) or self.stats.dropped % 10000 == 0:
                    logger.warning("live scoring queue full or closed: %d replies not scored so far", self.stats.dropped)
            elif chosen:
                for scorer in chosen:
                    self.stats.sampled[scorer.id] += 1
                self.stats.pending += 1
                self.stats.queued += 1
        if self.monitors and not self._closed:  # after close, nothing is sent (and no thread restarted)
            self._alert_from_host(self.monitors.seen(set() if full else {scorer.id for scorer in chosen}))
        if full or not chosen:
            return False
        given = RunInput(
            output=output, input=input, context=list(context) if context is not None else None, ground_truth=ground_truth,
            metadata=metadata, turns=turns, expected_trajectory=expected_trajectory, run_id=run_id,
        )
        job = _Job(given=given, scorers=chosen, trace=current_trace())
        try:
            loop = self._ensure_loop()
            loop.call_soon_threadsafe(self._start, job)
        except Exception as exc:
            self._done()
            logger.warning("live scoring could not start: %s", one_line(exc))
            return False
        return True

    def _admits(self, metadata: Mapping[str, Any]) -> bool:
        if self.filter is None:
            return True
        try:
            return bool(self.filter(metadata))
        except Exception as exc:  # the host's predicate: its failure is logged, never raised
            logger.warning("live scoring filter failed, run not scored: %s", one_line(exc))
            return False

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is not None and self._pid == os.getpid():
                return self._loop
            # First use, or first use in a forked child (threads do not survive a fork).
            self._pid = os.getpid()
            ready = threading.Event()
            loop = asyncio.new_event_loop()

            def serve() -> None:
                asyncio.set_event_loop(loop)
                self._slots = asyncio.Semaphore(self.concurrency)
                ready.set()
                loop.run_forever()
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

            self._thread = threading.Thread(target=serve, name="scorers-live", daemon=True)
            self._thread.start()
            ready.wait()
            self._loop = loop
            return loop

    def _start(self, job: _Job) -> None:
        asyncio.get_running_loop().create_task(self._score(job))

    async def _score(self, job: _Job) -> None:
        try:
            assert self._slots is not None
            async with self._slots:
                await self._begin_run()
                await asyncio.gather(*(self._one(scorer, job) for scorer in job.scorers))
        except Exception:  # a bug of ours: logged, and the job still counts as done
            logger.exception("live scoring failed")
        finally:
            self._done()

    async def _begin_run(self) -> None:
        if self._run_started or self.store is None:
            return
        self._run_started = True
        try:
            await aclaim_run(self.store, self.run, "live", source="live", meta={"scorers": {scorer.id: {} for scorer in self.scorers}})
        except ConfigError as exc:
            self._store_refused = str(exc)
            logger.error("live scoring keeps its results out of the store: %s", exc)
        except Exception as exc:
            logger.warning("live scoring could not register run %r: %s", self.run, one_line(exc))

    async def _one(self, scorer: AnyScorer, job: _Job) -> None:
        started = datetime.now(timezone.utc)
        given = job.given
        if given.context is None and self.get_context is None and scorer.context is None and scorer.get_context is None:
            # No context given and none of the scorer's own: the reply's tool results are
            # what the agent based its answer on.
            given = replace(given, context=tool_result_context(given.output) or None)
        # The context the reply was judged against, kept with every outcome: a reply whose
        # scoring failed can then be scored again later (scorers rescore) against the same.
        context = given.context if given.context is not None else scorer.context
        common: dict[str, Any] = dict(
            run=self.run, source="live", item_id=given.run_id, item_index=None, input=given.input, output=given.output,
            context=list(context) if context is not None else None, ground_truth=given.ground_truth, metadata=given.metadata, started_at=started,
        )
        try:
            result = await self._scored(scorer, given, job)
            record = result_record(scorer, result=result, **common)
        except NotScorable as exc:
            record = result_record(scorer, not_scorable=str(exc), **common)
        except Exception as exc:
            message = str(exc) if isinstance(exc, ScorerError) else one_line(exc)
            record = result_record(scorer, error=message, error_stage="scorer", **common)
        with self._lock:
            if record.outcome == "not_scorable":
                self.stats.not_scorable[scorer.id] = self.stats.not_scorable.get(scorer.id, 0) + 1
            elif record.error is None:
                self.stats.scored[scorer.id] += 1
                self.results.append(record)
            else:
                self.stats.errors[scorer.id] += 1
                self.errors.append(record)
        if record.error is not None:
            logger.warning("live scoring with %s failed: %s", scorer.id, record.error)
        if self.store is not None and self._store_refused is None:
            try:
                await asyncio.to_thread(self.store.save, kept_content(record, self.content))
            except Exception as exc:
                logger.warning("live scoring could not store a result of %s: %s", scorer.id, one_line(exc))
            await self._expire_content()
        for monitor, alert in self.monitors.observe(record):
            self._send_alert(monitor, alert)
        self._retry_alerts()
        if self.on_result is not None:
            try:
                returned = self.on_result(record)
                if inspect.isawaitable(returned):
                    await returned
            except Exception as exc:
                logger.warning("on_result failed for %s: %s", scorer.id, one_line(exc))

    async def _scored(self, scorer: AnyScorer, given: RunInput, job: _Job) -> ScoreResult:
        """The scorer's result for a reply. While the judge's circuit is open (its calls kept
        failing), the reply waits for the next probe instead of being recorded as an error:
        a judge back after a short outage scores the replies sent meanwhile."""
        waited = 0.0
        while True:
            try:
                with within(job.trace):  # the scorer run's span joins the agent's trace
                    return await scorer.ascore(given, get_context=self.get_context)
            except JudgeCircuitOpenError as exc:
                pause = exc.retry_after
                if pause is None or self._closed or waited + pause > CIRCUIT_WAIT:
                    raise
                waited += pause + 0.05
                await asyncio.sleep(pause + 0.05)

    def _done(self) -> None:
        with self._idle:
            self.stats.pending -= 1
            if self.stats.pending == 0:
                self._idle.notify_all()

    # monitors and retention --------------------------------------------------------------

    def _alert_from_host(self, alerts: list[tuple[Monitor, Alert]]) -> None:
        for monitor, alert in alerts:  # sent from the scoring loop, never on the host's thread
            try:
                self._ensure_loop().call_soon_threadsafe(self._send_alert, monitor, alert)
            except Exception as exc:
                logger.warning("monitor %s could not send its %s: %s", monitor.name, alert.kind, one_line(exc))

    def _send_alert(self, monitor: Monitor, alert: Alert) -> None:
        self._sending_task(self.monitors.send(monitor, alert))

    def _retry_alerts(self) -> None:
        """At most every RETRY_ALERTS_EVERY seconds: send again the alerts no receiver took."""
        now = time.monotonic()
        if not self.monitors or now - self._retried_at < RETRY_ALERTS_EVERY:
            return
        self._retried_at = now
        self._sending_task(self.monitors.retry())

    def _sending_task(self, sending: Coroutine[Any, Any, None]) -> None:
        """Run `sending` on the scoring loop; flush() waits for it."""
        with self._lock:
            self._sending += 1

        def sent(_: object) -> None:
            with self._idle:
                self._sending -= 1
                self._idle.notify_all()

        asyncio.get_running_loop().create_task(sending).add_done_callback(sent)

    async def _expire_content(self) -> None:
        """At most once an hour: clear the item fields of this run's records older than the
        retention period (scores stay)."""
        kept_for, now = self.content.kept_for, time.monotonic()
        if kept_for is None or not isinstance(self.store, KeepsAlerts) or (self._expired_at is not None and now - self._expired_at < 3600):
            return
        self._expired_at = now
        try:
            await asyncio.to_thread(self.store.expire_content, self.run, datetime.now(timezone.utc) - kept_for)
        except Exception as exc:
            logger.warning("live scoring could not clear expired content of run %r: %s", self.run, one_line(exc))

    # shutdown ----------------------------------------------------------------------------

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued reply is scored; False when `timeout` ran out first.
        (Blocking: from async code use `await aflush()`.)"""
        with self._idle:
            return self._idle.wait_for(lambda: self.stats.pending == 0 and self._sending == 0, timeout)

    async def aflush(self, timeout: float | None = None) -> bool:
        return await asyncio.to_thread(self.flush, timeout)

    def close(self, timeout: float | None = None) -> bool:
        """Flush (up to `timeout`), stop the background thread and close a store opened from
        a path. Later replies are dropped (and counted). True when nothing was left pending."""
        with self._lock:
            if self._closed:
                return self.stats.pending == 0
            self._closed = True
        flushed = self.flush(timeout)
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None and thread.is_alive():
            if not flushed:  # what is still scoring is cancelled, and let finish cancelling before the loop stops
                try:
                    asyncio.run_coroutine_threadsafe(_cancel_everything(), loop).result(timeout=5)
                except Exception as exc:
                    logger.warning("live scoring could not cancel what was still scoring: %s", one_line(exc))
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)
        if self._run_started and self.store is not None and self._store_refused is None:
            try:  # the run is over: finished, or cut short with replies still unscored
                self.store.end_run(self.run, "complete" if flushed else "interrupted")
            except Exception as exc:
                logger.warning("live scoring could not mark run %r finished: %s", self.run, one_line(exc))
        if self._owns_store and self.store is not None:
            self.store.close()
        atexit.unregister(self._at_exit)
        return flushed

    def _at_exit(self) -> None:
        if not self.close(self.flush_at_exit):
            logger.warning("exiting with %d live scores unfinished", self.stats.pending)

    def __enter__(self) -> LiveScorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


async def _cancel_everything() -> None:
    """Cancel every other task of the running loop and wait until they have ended."""
    others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


def attach_scorers(agent: Any, scorers: Sequence[AnyScorer] | AnyScorer, **options: Any) -> Any:
    """`agent` with `scorers` attached (options as for LiveScorer); `.live` flushes/closes."""
    return LiveScorer(scorers, **options).wrap(agent)

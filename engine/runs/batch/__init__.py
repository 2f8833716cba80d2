"""Batch evaluation: score every item of a data set with several scorers, concurrently.

    result = run_evals(
        data="examples/halueval_qa.jsonl",        # a list, any iterable, or a JSONL path
        scorers=[create_hallucination_scorer()],
        target=agent,                             # optional: items without `output` need it
        store="results.sqlite", run="nightly",    # optional: saved as it goes, resumable
        thresholds={"hallucination": 0.2},        # optional: a pass/fail verdict for CI
    )
    result.scores        # {"hallucination": 0.15}: the mean per scorer id
    result.passed        # True / False: False when a threshold is not met or a scorer scored nothing

One bound (`concurrency`) limits how many judge calls and target calls are in flight at
once, over all items and scorers: an item waiting for a step's answer holds no slot, so
other items' calls keep the pipe full (answers from the response cache take none).
Items are read lazily from the data, at most twice `concurrency` of them in progress, so a
JSONL file of any size streams in constant memory (keep_results=False also
drops the per-item results and keeps only the aggregates). The per-item results keep the
order of the input. A failing item (unreadable, target error, judge error) is recorded
with its cause and never stops the others.

Each (item, scorer) pair ends in one of three outcomes, never mixed: scored, error (with its
cause and stage: item, target, scorer, store), or not scorable (the scorer cannot judge the
item, e.g. no context where one is needed; with the reason). Means are over scored items.

With a store, every (item, scorer) result is saved as it completes, in batches (one
transaction per up to 64 results or half a second), with the fingerprints of the item's
content and of the scorer (definition, templates, schemas, options, judge model, mode,
sampling). Running a run of the same name again (after a crash, Ctrl-C, or judge errors)
reuses a saved result only when both fingerprints still match, and judges the rest again;
after a whole pass over a run's data file, results of items no longer in it are dropped. An
item's identity is its `id`, else its line in the data. A run remembers the data file and
the scorers it was started with: resuming it with others is refused (`replace=True` starts
it over), and so is a second process resuming it at once. The judge's answers go through a
response cache (on by default here): a hard crash loses at most the last batch of results,
and scoring those again costs nothing.

A judge failure that no retry can mend (a refused key, an unknown model, an unsupported
response format, a judge that cannot be reached, or the circuit breaker opening) stops the
run at once: finished results stay saved, the run ends `failed`, and a rerun continues it.

Tokens and their estimated cost are summed per scorer; `max_cost` is a budget for the whole
run, across its invocations (and, for a run shared by workers, all of them together): every
judge call holds what it may cost before it leaves, and no call leaves that could take the
run past the budget (judge/middleware/budget.py). The run then stops cleanly (no new items
are started; the run is resumable, and resuming it with a higher budget goes on). A run so
stopped has not passed (`passed` is False, `stopped` says why), whatever its means.

The rooms of this package: `writes` (results saved in batches), `lease` (one process at a
time per run), `resume` (what a resumed run may reuse), `evaluation` (one item, from its line
to its outcomes), `tally` (counts, errors, aggregates), `budget` (failed items a run may have,
what it may spend), `lifecycle` (a run from its beginning in the store to its result) and
`options` (the arguments, grouped).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...judge.middleware.budget import SpendLimit
from ...scoring import AnyScorer
from ...scoring.passing import ReasonPolicy
from ...store import RunKind, Store
from ...sync import blocking
from ..items import Data
from ..results import EvalResult
from ..targets import Target
from ..verdict import Standard, error_budget
from .lease import LEASE_SECONDS
from .lifecycle import CacheChoice, check_scorers, default_run_name, evaluate
from .options import Limits, Pace, Saving
from .tally import ItemCallback, where_item

__all__ = [
    "LEASE_SECONDS",
    "CacheChoice",
    "ItemCallback",
    "arun_evals",
    "check_scorers",
    "default_run_name",
    "error_budget",
    "run_evals",
    "where_item",
]


async def arun_evals(
    data: Data,
    scorers: Sequence[AnyScorer] | AnyScorer,
    target: Target | None = None,
    on_item_complete: ItemCallback | None = None,
    concurrency: int = 8,
    *,
    run: str | None = None,
    store: Store | str | Path | None = None,
    thresholds: Mapping[str, float] | None = None,
    max_errors: int | str | None = None,
    min_coverage: float = 1.0,
    gate: str = "mean",
    replace: bool = False,
    keep_results: bool = True,
    target_timeout: float | None = None,
    meta: Mapping[str, Any] | None = None,
    cache: CacheChoice = True,
    max_cost: float | SpendLimit | None = None,
    lease_seconds: float = 60.0,
    share_work: bool = True,
    sample: int = 0,
    kind: RunKind = "batch",
    reasons: ReasonPolicy = "always",
    min_confidence: float | None = None,
) -> EvalResult:
    """Score every item of `data` with every scorer; see the module docstring.

    `store` (a Store or a SQLite path) saves each result as it completes under the run name
    `run` (generated when omitted); an existing run of that name is resumed (`replace=True`
    starts it over). `result.passed` and `result.verdict` say whether the run passed, decided
    by `runs/verdict.py` as for every runner: `thresholds` ({scorer_id: value}; else each
    scorer's YAML `threshold:`) are pass lines the mean must meet (at most the value for
    lower-is-better scorers, at least it otherwise; `gate="lower"`/`"upper"` compares that
    bound of the mean's 95% interval instead); `min_coverage` (default 1.0) is the share of
    the items each scorer must score (items that failed or were not scorable are not
    covered); `max_errors` (N items, or "N%" of them; default 0) is how many failed items the
    run may have; `min_confidence` (a probability) fails the run when a scored item's
    confidence, where the judge gave one, is below it; and a run stopped early never passes. `on_item_complete(item_result)`
    (sync or async) is called once per item, in completion order, also for items resumed
    from the store (`resumed=True`). `meta` is stored with the run (e.g. where the data
    came from; its `data` names the data for the resume check when it is not a file).
    Two items with the same id are refused before any call for files and lists; in a
    one-shot iterator the repeated id is that item's error (not checked with
    keep_results=False, which scores a stream in flat memory). `sample` numbers a repeated
    judgement of the same data (see `eval --repeat`): every judge request carries it, so a
    response cache serves each repeat its own answers. `kind` says what makes the run (`rescore`,
    `align` and the workbench set theirs): an existing run of another kind under the name
    `run` (a live run, say) is refused, never resumed, pruned or overwritten.

    `cache` puts a response cache in front of every scorer's judge: True (the default) the
    file named by SCORERS_CACHE or in the user's cache directory, a path, a ResponseCache, or
    False for none. `max_cost` (US dollars) is the run's budget: no judge call leaves that could
    take the run's estimated spend, over every invocation (and every worker, when workers
    share the run), past it; every judge model needs a price then. A `SpendLimit` shares one
    budget between several runs.

    With a store that shares work (a `postgresql://` URL), the same call in several processes
    or machines splits one run: each claims unscored items from the database, holding them for
    `lease_seconds` (renewed while it lives), and returns when the whole run is scored; its
    result is the whole run's (the items others scored loaded and counted as reused, when the
    data can be read again: a file or a list). `share_work=False` scores every item given
    here (the caller splits the work itself, as the Ray adapter does). Otherwise a second
    process resuming a run that one is running is refused.

    `reasons` says which scores the judge explains: `always`, `failing` (the scores that do
    not pass their threshold: the run's, else the scorer's `threshold:`, else half its scale),
    `never`, or `on-demand` (none now; each when its stored item is opened, see
    runs/stored/reasons.py). The scores are the same whatever it says.
    """
    return await evaluate(
        data, scorers, target, on_item_complete,
        pace=Pace(concurrency=concurrency, target_timeout=target_timeout, keep_results=keep_results, sample=sample, reasons=reasons),
        limits=Limits(standard=Standard.of(thresholds, gate=gate, min_coverage=min_coverage, max_errors=max_errors, min_confidence=min_confidence), max_cost=max_cost),
        saving=Saving(store=store, run=run, replace=replace, meta=meta, lease_seconds=lease_seconds, share_work=share_work, kind=kind),
        cache=cache,
    )


run_evals = blocking(arun_evals)

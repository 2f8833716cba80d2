"""A stored run belongs to what made it: the one place a runner takes a run name in a store.

Every runner that writes a run (batch `eval` and `run_evals`, live scoring, `rescore`,
`align`, `pairwise`, the workbench) claims its name here before it writes a record. A run
records its kind and what it was started with when it is created; claiming an existing run
of another kind is refused, and so is resuming one started with other settings, each with
the flag that fixes it. Only `replace=True` (`--replace`) deletes a run, and only as the
caller's explicit choice: nothing else overwrites or prunes another runner's records.
Which process writes a run now is its lease (batch/lease.py): eval, pairwise and align hold
one while they run (align one over all its runs), so a second process is refused, unless
eval's workers share the run's items through PostgreSQL on purpose.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..store import RunInfo, RunKind, Source, Store

#: What a runner finds wrong in resuming a run of its kind (empty: nothing), from what the
#: run was started with (None for a run stored before runs recorded it).
Differences = Callable[[Mapping[str, Any] | None], list[str]]


@dataclass(frozen=True)
class Claimed:
    """A run name taken for writing: the run as stored now, and what it was before."""

    run: RunInfo
    resumed: bool = False
    ended_before: bool = False


def _refuse_other_kind(name: str, previous: RunInfo, kind: RunKind) -> None:
    if previous.kind != kind:
        raise ConfigError(
            f"run {name!r} is a {previous.kind} run, and a {kind} run cannot write into it (its results would be mixed, "
            "overwritten or pruned): give this run another name, or start that one over, deleting its results",
            parameter="replace",
        )


def check_claim(store: Store, name: str, kind: RunKind) -> RunInfo | None:
    """Refuse at once (before any work) a name that belongs to a run of another kind; the
    run as stored, if any."""
    previous = store.get_run(name)
    if previous is not None:
        _refuse_other_kind(name, previous, kind)
    return previous


def claim_run(
    store: Store,
    name: str,
    kind: RunKind,
    *,
    started_with: Mapping[str, Any] | None = None,
    meta: Mapping[str, Any] | None = None,
    replace: bool = False,
    differences: Differences | None = None,
    source: Source = "batch",
) -> Claimed:
    """Take `name` in `store` for a run of `kind`: create it (recording its kind, what it was
    started with and `meta`), or resume it when it is of the same kind and `differences`
    finds nothing changed. `replace` deletes an existing run first."""
    previous = store.get_run(name)
    if previous is not None and replace:
        store.delete_run(name)
        previous = None
    if previous is not None:
        _refuse_other_kind(name, previous, kind)
        found = differences(previous.meta.get("started_with")) if differences is not None else []
        if found:
            raise ConfigError(
                f"cannot resume run {name!r}: {'; '.join(found)}. Give it a new name, or start it over", parameter="replace"
            )
    recorded: dict[str, Any] = {**dict(meta or {}), "kind": kind}
    if started_with is not None:
        recorded["started_with"] = dict(started_with)
    if previous is not None:  # resuming keeps what the run recorded before, beside what is new
        recorded = {**previous.meta, **recorded}
    stored = store.begin_run(RunInfo(name=name, source=source, meta=recorded))
    return Claimed(run=stored, resumed=previous is not None, ended_before=previous is not None and previous.status != "running")


async def aclaim_run(store: Store, name: str, kind: RunKind, **options: Any) -> Claimed:
    """`claim_run` off the event loop (each step is a round trip to the database)."""
    return await asyncio.to_thread(lambda: claim_run(store, name, kind, **options))


__all__ = ["Claimed", "Differences", "aclaim_run", "check_claim", "claim_run"]

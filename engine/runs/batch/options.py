"""The options of a batch run, grouped by what they are about. `arun_evals(...)` takes them
as keywords (its public signature) and passes these values on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from ...judge.middleware.budget import SpendLimit
from ...scoring.passing import ReasonPolicy
from ...store import RunKind, Store
from ..verdict import Standard


@dataclass(frozen=True)
class Pace:
    """How items are scored: `concurrency` judge and target calls in flight at most, a
    target's time limit, whether per-item results are kept, and which repeat this is."""

    concurrency: int = 8
    target_timeout: float | None = None
    keep_results: bool = True
    sample: int = 0
    #: Which scores get a reason from the judge (see scoring/passing.py).
    reasons: ReasonPolicy = "always"

    def __post_init__(self) -> None:
        if not isinstance(self.concurrency, int) or isinstance(self.concurrency, bool) or self.concurrency < 1:
            raise ConfigError(f"concurrency must be a positive integer, got {self.concurrency!r}")


@dataclass(frozen=True)
class Limits:
    """What the run must meet to pass (its verdict's standard), and what it may spend."""

    standard: Standard = field(default_factory=Standard)
    #: US dollars, or a limit shared with other runs (judge/middleware/budget.py).
    max_cost: float | SpendLimit | None = None

    def __post_init__(self) -> None:
        if self.max_cost is not None and not isinstance(self.max_cost, SpendLimit) and not self.max_cost > 0:
            raise ConfigError(f"max_cost must be a positive number of US dollars, got {self.max_cost!r}")


@dataclass(frozen=True)
class Saving:
    """Where and under which name results are saved, and how workers share a run."""

    store: Store | str | Path | None = None
    run: str | None = None
    replace: bool = False
    meta: Mapping[str, Any] | None = None
    lease_seconds: float = 60.0
    share_work: bool = True
    #: What makes the run (runs/identity.py): a run of another kind is never written into.
    kind: RunKind = "batch"

    def __post_init__(self) -> None:
        if not self.lease_seconds > 0:
            raise ConfigError(f"lease_seconds must be positive, got {self.lease_seconds!r}")
